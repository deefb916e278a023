package rlsweep_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage keeps docs/architecture.md's "Packages" section true to the code:
// every package of the module is named there, as `path`, `name` or its top folder `folder/`.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Packages\n")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	for _, path := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, "github.com/rlsweep/rlsweep"), "/")
		if rel == "" {
			continue // the root holds only these tests
		}
		name := rel[strings.LastIndex(rel, "/")+1:]
		if !strings.Contains(section, "`"+rel+"`") && !strings.Contains(section, "`"+name+"`") &&
			!strings.Contains(section, "`"+strings.SplitN(rel, "/", 2)[0]+"/`") {
			t.Errorf("package %s is not named in docs/architecture.md's Packages section (as `%s`)", rel, rel)
		}
	}
}
