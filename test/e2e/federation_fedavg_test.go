package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// fedavgWeights is the size of one model message of fedavg.py: its row
// count and its weights, 10*32+32 + 32*2+2 float32s.
const fedavgWeights = 8 + 4*(10*32+32+32*2+2)

// fedavgRun submits the FedAvg example at alice (a holder; bob holds the
// other half, carol aggregates) for rounds rounds of epochs each.
func fedavgRun(t *testing.T, alice *fedServer, rounds, epochs int) *apiv1.Run {
	t.Helper()
	b, err := os.ReadFile("../../examples/federated/fedavg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../examples/federated/fedavg.py")
	if err != nil {
		t.Fatal(err)
	}
	return alice.submit(t, string(b), map[string]string{
		"script": script, "sdk": sdkPath(t), "python": "/usr/bin/python3", "rounds": strconv.Itoa(rounds), "epochs": strconv.Itoa(epochs),
	})
}

// centralAccuracy trains fedavg.py's model on all the data in one place.
func centralAccuracy(t *testing.T, rounds, epochs int) float64 {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "../../examples/federated/fedavg.py", "--central", "--rounds", strconv.Itoa(rounds), "--epochs", strconv.Itoa(epochs)).CombinedOutput()
	if err != nil {
		t.Fatalf("fedavg.py --central: %v\n%s", err, out)
	}
	var r struct{ Accuracy float64 }
	line, _ := strings.CutPrefix(strings.TrimSpace(string(out)), "central ")
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("fedavg.py --central printed %q", out)
	}
	return r.Accuracy
}

// checkFedAvg checks a FedAvg run that ended: Succeeded, within 2 points
// of the central model, and nothing but model weights crossed parties,
// each round's once.
func checkFedAvg(t *testing.T, run apiv1.RunID, rounds, epochs int, alice, bob, carol *fedServer) []apiv1.ChannelMessage {
	t.Helper()
	done := alice.waitDone(t, run, 5*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("FedAvg run %s: %s %s %s; shares %s", run, done.Status.Phase, done.Status.Code, done.Status.Message, shareLine(nodeOf(t, done, "fedavg")))
	}
	agg := nodeOf(t, carol.waitDone(t, apiv1.PartID(run, "carol"), time.Minute), "fedavg")
	acc, err := strconv.ParseFloat(agg.Outputs["accuracy"], 64)
	if err != nil {
		t.Fatalf("the aggregator's accuracy output = %q", agg.Outputs["accuracy"])
	}
	central := centralAccuracy(t, rounds, epochs)
	t.Logf("FedAvg test accuracy %.4f, central %.4f; %s bytes through the aggregator's channel in the last round", acc, central, agg.Outputs["bytes-per-round"])
	if math.Abs(acc-central) > 0.02 || acc < 0.8 {
		t.Errorf("FedAvg reached %.4f, the central model %.4f: want within 2 points (and above 0.8)", acc, central)
	}
	if want := strconv.Itoa(4 * fedavgWeights); agg.Outputs["bytes-per-round"] != want {
		t.Errorf("the aggregator moved %s bytes in the last round; want %s: two models in, two out", agg.Outputs["bytes-per-round"], want)
	}
	log, err := carol.api.Messages(t.Context(), apiv1.PartID(run, "carol"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range log {
		if m.Size != fedavgWeights || (m.Party != "alice" && m.Party != "bob") || m.Attempt != 1 {
			t.Errorf("carol logged %+v; want only models of %d bytes, to and from alice and bob, in attempt 1", m, fedavgWeights)
		}
		seen[fmt.Sprintf("%s %s %s", m.Direction, m.Party, m.Name)]++
	}
	for r := 1; r <= rounds; r++ {
		for _, p := range []string{"alice", "bob"} {
			for _, k := range []string{"received " + p + " update-" + strconv.Itoa(r), "sent " + p + " model-" + strconv.Itoa(r)} {
				if seen[k] != 1 {
					t.Errorf("carol's log has %q %d times; want once", k, seen[k])
				}
			}
		}
	}
	for _, s := range []*fedServer{alice, bob} {
		part := s.waitDone(t, apiv1.PartID(run, s.name), time.Minute)
		if part.Status.Phase != apiv1.PhaseSucceeded {
			t.Errorf("%s's part: %s %s", s.name, part.Status.Phase, part.Status.Message)
		}
	}
	return log
}

func TestFederatedAveragingWithPyTorchReachesTheCentralAccuracy(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	run := fedavgRun(t, alice, 10, 2)
	checkFedAvg(t, run.ID, 10, 2, alice, bob, carol)
}

// The aggregator's server is killed (kill -9) in the middle of the
// rounds and started again: the shares' calls through it fail meanwhile
// and are retried, and the run ends as if nothing happened, each round
// once. Rounds of 20 local epochs last long enough that most of them are
// left when the server dies.
func TestFederatedAveragingSurvivesTheAggregatorsServerKilled(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	run := fedavgRun(t, alice, 12, 20)
	waitMessage(t, carol, apiv1.PartID(run.ID, "carol"), "update-2")
	carol.kill9(t)
	killed := time.Now()
	// While carol is down, the initiator cannot read carol's part, and
	// the holders cannot hand carol their updates.
	waitShareState(t, alice, run.ID, "carol", apiv1.ShareUnreachable)
	carol.restart(t)
	log := checkFedAvg(t, run.ID, 12, 20, alice, bob, carol)
	for _, m := range log {
		if m.Name == "update-12" && !m.At.After(killed) {
			t.Errorf("the last round's update reached carol at %s, before its server was killed at %s: the kill was not mid-run", m.At, killed)
		}
	}
}
