// A client of kiln's HTTP API written against the TypeScript types that
// openapi-typescript generates from the OpenAPI document (./api.d.ts,
// which the e2e test TestGeneratedClients writes) and openapi-fetch. It
// submits a Workflow and a TrainJob as typed values, reads each run back
// until it ends, submits a Workflow kiln refuses, and prints one JSON line
// for each: what the test checks against the server.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

type Schemas = components["schemas"];

const [server, token] = [process.argv[2], process.env.KILN_TOKEN ?? ""];
const client = createClient<paths>({ baseUrl: server, headers: { Authorization: `Bearer ${token}` } });

const workflow = (name: string, tasks: Schemas["Task"][]): Schemas["WorkflowDocument"] => ({
  apiVersion: "kiln.dev/v1alpha1",
  kind: "Workflow",
  metadata: { name },
  spec: { tasks },
});

const trainJob: Schemas["TrainJobDocument"] = {
  apiVersion: "kiln.dev/v1alpha1",
  kind: "TrainJob",
  metadata: { name: "ts-client-tj" },
  spec: { runtimeRef: { name: "torch-distributed" }, trainer: { command: ["true"], numNodes: 2 } },
};

const ended: Schemas["RunStatus"]["phase"][] = ["Succeeded", "Failed", "Cancelled"];

async function submitAndWait(doc: Schemas["RunnableDocument"]): Promise<Schemas["Run"]> {
  const sub = await client.POST("/api/v1/runs", { body: doc });
  if (!sub.data) {
    throw new Error(`submit: ${sub.response.status} ${JSON.stringify(sub.error)}`);
  }
  for (;;) {
    const got = await client.GET("/api/v1/runs/{id}", { params: { path: { id: sub.data.id } } });
    if (!got.data) {
      throw new Error(`get run ${sub.data.id}: ${got.response.status} ${JSON.stringify(got.error)}`);
    }
    if (ended.includes(got.data.status.phase)) {
      return got.data;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  const hello: Schemas["Task"] = { name: "hello", command: ["sh", "-c", "echo hello from typescript"] };
  for (const doc of [workflow("ts-client-wf", [hello]), trainJob]) {
    const run = await submitAndWait(doc);
    console.log(JSON.stringify({ kind: run.kind, id: run.id, name: run.name, phase: run.status.phase }));
  }
  const bad = await client.POST("/api/v1/runs", { body: workflow("ts-client-bad", []) });
  const code: Schemas["Error"]["code"] | undefined = bad.error?.errors[0]?.code;
  if (bad.response.status !== 400 || code === undefined) {
    throw new Error(`a workflow without tasks: ${bad.response.status} ${JSON.stringify(bad.error)}, want 400 with errors`);
  }
  console.log(JSON.stringify({ kind: "refused", status: bad.response.status, code }));
}

main().catch((err: unknown) => {
  console.error("submit:", err);
  process.exit(1);
});
