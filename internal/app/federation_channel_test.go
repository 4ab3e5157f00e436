package app

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/federation"
)

// A channel token is good for its own share and attempt only, and is the
// same each time it is made (a rebuilt spec is the launched one).
func TestAChannelTokenIsBoundToItsShareAndAttempt(t *testing.T) {
	t.Parallel()
	a := openParty(t, "bob")
	a.Advertise = "http://10.0.0.2:8420"
	env, err := a.ChannelEnv("r-bob", "train", 2)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := a.ChannelEnv("r-bob", "train", 2)
	if len(env) != 2 || strings.Join(env, " ") != strings.Join(again, " ") {
		t.Fatalf("ChannelEnv = %v, then %v; want the same two variables", env, again)
	}
	if env[0] != "KILN_FEDERATION_CHANNEL=http://10.0.0.2:8420/api/v1/channel/r-bob/train/2" {
		t.Errorf("channel URL = %s", env[0])
	}
	tok, _ := strings.CutPrefix(env[1], "KILN_FEDERATION_TOKEN=")
	if !strings.HasPrefix(tok, apiv1.ChannelTokenPrefix) {
		t.Fatalf("token %q lacks %s", tok, apiv1.ChannelTokenPrefix)
	}
	if err := a.CheckChannelToken(federation.ShareAt{Part: "r-bob", Share: "train", Attempt: 2}, tok); err != nil {
		t.Errorf("its own token refused: %v", err)
	}
	for _, at := range []federation.ShareAt{
		{Part: "r-bob", Share: "train", Attempt: 1},
		{Part: "r-bob", Share: "eval", Attempt: 2},
		{Part: "s-bob", Share: "train", Attempt: 2},
	} {
		if err := a.CheckChannelToken(at, tok); apiv1.CodeOf(err) != apiv1.CodeChannelToken {
			t.Errorf("the token of train/2 used for %+v = %v; want %s", at, err, apiv1.CodeChannelToken)
		}
	}
	other := openParty(t, "bob")
	if err := other.CheckChannelToken(federation.ShareAt{Part: "r-bob", Share: "train", Attempt: 2}, tok); apiv1.CodeOf(err) != apiv1.CodeChannelToken {
		t.Errorf("another home's server took the token: %v", err)
	}
}

// A piece must fit its message: the size, the count and the length of
// each piece agree, and names and digests have their form.
func TestAChannelPieceMustFitItsMessage(t *testing.T) {
	t.Parallel()
	at := federation.ShareAt{Part: "r-bob", Share: "s", Attempt: 1}
	digest := "sha256:" + strings.Repeat("0", 64)
	big := int64(apiv1.ChannelChunkSize) + 3
	for _, c := range []struct {
		name string
		p    federation.Piece
		ok   bool
	}{
		{"m", federation.Piece{Pieces: 1, Size: 0, Digest: digest}, true},
		{"m", federation.Piece{Pieces: 1, Size: 2, Digest: digest, Data: []byte("hi")}, true},
		{"m", federation.Piece{Index: 0, Pieces: 2, Size: big, Digest: digest, Data: make([]byte, apiv1.ChannelChunkSize)}, true},
		{"m", federation.Piece{Index: 1, Pieces: 2, Size: big, Digest: digest, Data: []byte("abc")}, true},
		{"m", federation.Piece{Index: 1, Pieces: 2, Size: big, Digest: digest, Data: []byte("ab")}, false},
		{"m", federation.Piece{Index: 2, Pieces: 2, Size: big, Digest: digest, Data: []byte("abc")}, false},
		{"m", federation.Piece{Pieces: 3, Size: big, Digest: digest, Data: make([]byte, apiv1.ChannelChunkSize)}, false},
		{"m", federation.Piece{Pieces: 1, Size: 2, Digest: "md5:00", Data: []byte("hi")}, false},
		{"m/../x", federation.Piece{Pieces: 1, Size: 2, Digest: digest, Data: []byte("hi")}, false},
		{"m", federation.Piece{Pieces: 1, Size: apiv1.ChannelMaxMessage + 1, Digest: digest}, false},
	} {
		err := checkPiece(at, c.name, c.p)
		if (err == nil) != c.ok || (err != nil && apiv1.CodeOf(err) != apiv1.CodeChannelMessage) {
			t.Errorf("piece %d/%d of %q (%d bytes, %d here) = %v; want ok %t", c.p.Index, c.p.Pieces, c.name, c.p.Size, len(c.p.Data), err, c.ok)
		}
	}
}
