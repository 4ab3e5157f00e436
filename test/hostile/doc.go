// Package hostile submits malformed and malicious specs to a real
// embedded kiln, the way kiln run does, and checks that each is refused
// without hanging, with its coded error, naming its field, and that no run is
// created. Each case is a file in testdata whose first lines say what it
// wants:
//
//	# want: KLN-1023 spec.tasks[0].resources.cpu
//
// one line per error it must bring (a field of "-" is an error of the
// file or document as a whole). Cases too large to keep as files are
// generated in hostile_test.go.
package hostile
