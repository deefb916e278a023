package rlsweep_test

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// layoutRow matches a row of the README's layout table: | `folder/` | what |.
var layoutRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

// TestREADMELayoutListsEveryFolder checks that the README's layout table has one row for every
// top-level folder holding Go code or a doc (a .go or .md file anywhere below it), and no row for a
// folder that does not exist.
func TestREADMELayoutListsEveryFolder(t *testing.T) {
	rows := readmeLayout(t)
	folders := docOrCodeFolders(t)
	if len(folders) < 10 {
		t.Fatalf("found %d top-level folders with Go code or docs (%v), want the whole repository", len(folders), folders)
	}
	for _, f := range folders {
		if rows[f] == 0 {
			t.Errorf("README.md's layout table has no row for %s/: add one line saying what it holds", f)
		}
	}
	for f, n := range rows {
		if n > 1 {
			t.Errorf("README.md's layout table has %d rows for %s/, want one", n, f)
		}
		if st, err := os.Stat(f); err != nil || !st.IsDir() {
			t.Errorf("README.md's layout table lists %s/, which is not a folder of the repository", f)
		}
	}
}

// readmeLayout counts the rows of the README's "## Layout" table by top-level folder (cmd/rlsweep/ is
// a row of cmd).
func readmeLayout(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layout"
			continue
		}
		if m := layoutRow.FindStringSubmatch(line); in && m != nil {
			top, _, _ := strings.Cut(strings.TrimSuffix(m[1], "/"), "/")
			rows[top]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal(`README.md has no "## Layout" table of | ` + "`folder/`" + ` | what | rows`)
	}
	return rows
}

// docOrCodeFolders lists the top-level folders (not hidden) that hold a .go or .md file: the tracked
// files where git knows the repository, else what is on disk.
func docOrCodeFolders(t *testing.T) []string {
	t.Helper()
	var files []string
	if out, err := exec.Command("git", "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		files = strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	} else {
		err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				files = append(files, filepath.ToSlash(path))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set := map[string]bool{}
	for _, f := range files {
		top, rest, nested := strings.Cut(f, "/")
		if !nested || strings.HasPrefix(top, ".") || !(strings.HasSuffix(rest, ".go") || strings.HasSuffix(rest, ".md")) {
			continue
		}
		set[top] = true
	}
	var out []string
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
