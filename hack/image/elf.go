package main

import (
	"debug/elf"
	"errors"
	"fmt"
)

// architectures are the OCI names of the machines kiln is built for.
var architectures = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv64",
}

// staticExecutable checks that path is a Linux executable that needs no
// dynamic loader and no shared library (an image from an empty base has
// neither), and returns its architecture's OCI name.
func staticExecutable(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("%s is an ELF %s, not an executable", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked (it asks for a loader): build it with CGO_ENABLED=0 (make release)", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", fmt.Errorf("%s: reading its libraries: %w", path, err)
	}
	if len(libs) > 0 {
		return "", fmt.Errorf("%s needs shared libraries %q: build it with CGO_ENABLED=0 (make release)", path, libs)
	}
	arch, ok := architectures[f.Machine]
	if !ok {
		return "", fmt.Errorf("%s is for %s, a machine kiln's image is not made for", path, f.Machine)
	}
	return arch, nil
}
