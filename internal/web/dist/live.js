// kiln's web UI: Server-Sent Events read with fetch, so that the token
// travels in the Authorization header as on every other call (the server
// reads no token from the address, which would put it in logs, and
// EventSource cannot send a header). A stream resumes where it stopped
// (Last-Event-ID and ?after=) when the connection drops.
"use strict";

// sseStream reads the Server-Sent Events at path and calls
// onEvents(list) with each batch of {id, event, data} it parses. When the
// server ends the stream, onEnd() is called; when the connection fails,
// it starts again after the last id it read, after a pause. It returns a
// function that stops it. opts.after is the id to start after.
function sseStream(path, opts) {
  const ctl = new AbortController();
  let last = opts.after || "", stopped = false;
  const open = async () => {
    while (!stopped) {
      try {
        const how = await readStream(path, last, ctl.signal, (batch) => {
          last = batch[batch.length - 1].id || last;
          opts.onEvents(batch);
        });
        if (how === "plain") { opts.onUnsupported?.(); return; }
        break; // the server ended it: the run has ended
      } catch (e) {
        if (stopped) return;
        if (e.status && e.status < 500) { opts.onError?.(e); return; }
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
    if (!stopped) opts.onEnd?.();
  };
  open();
  return () => { stopped = true; ctl.abort(); };
}

// readStream reads one connection to path's stream, after id last:
// "ended" when the server ended it, "plain" when it is no event stream
// (a server that does not stream this path).
async function readStream(path, last, signal, onBatch) {
  const headers = { ...authHeader(), Accept: "text/event-stream" };
  if (last) headers["Last-Event-ID"] = last;
  const sep = path.includes("?") ? "&" : "?";
  const r = await fetch(path + (last ? sep + "after=" + encodeURIComponent(last) : ""), { headers, signal });
  if (!r.ok) throw await apiError(r);
  if (!(r.headers.get("Content-Type") || "").startsWith("text/event-stream")) { r.body?.cancel(); return "plain"; }
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return "ended";
    buf += value.replace(/\r\n?/g, "\n");
    const blocks = buf.split("\n\n");
    buf = blocks.pop();
    const batch = blocks.map(parseEvent).filter(Boolean);
    if (batch.length) onBatch(batch);
  }
}

// parseEvent reads one event's lines; null for a comment alone (a heartbeat).
function parseEvent(block) {
  const ev = { id: "", event: "message", data: "" };
  let any = false;
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i), value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "data") ev.data += (ev.data ? "\n" : "") + value;
    else if (field === "id" || field === "event") ev[field] = value;
    any = true;
  }
  return any ? ev : null;
}
