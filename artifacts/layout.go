package artifacts

import (
	"fmt"
	"strings"
)

// The artifact layout: every key rlsweep reads or writes, relative to the store's prefix, is made by one
// function of this file, and docs/artifacts.md lists each (TestLayoutDocumented checks both).

// SweepDir is a sweep's folder: sweeps/<sweep-id>. The sweep ID's own slashes ("sweep/<name>/<short-id>")
// become nested folders, each segment made safe.
func SweepDir(sweepID string) string {
	id := strings.TrimPrefix(sweepID, "sweep/")
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = Segment(p)
	}
	return "sweeps/" + strings.Join(parts, "/")
}

func sweepKey(sweepID, name string) string { return SweepDir(sweepID) + "/" + name }

// SpecYAMLKey is the spec as the user wrote it.
func SpecYAMLKey(sweepID string) string { return sweepKey(sweepID, "spec.yaml") }

// SpecJSONKey is the spec as rlsweep read it, defaults filled in.
func SpecJSONKey(sweepID string) string { return sweepKey(sweepID, "spec.json") }

// PlanKey is the sweep's planned trials.
func PlanKey(sweepID string) string { return sweepKey(sweepID, "plan.json") }

// OwnerKey names the submission that owns the sweep's files.
func OwnerKey(sweepID string) string { return sweepKey(sweepID, "owner.json") }

// ProbesKey is the probe stage's report.
func ProbesKey(sweepID string) string { return sweepKey(sweepID, "probes.json") }

// ResultsPartsPrefix is the prefix of the result parts a running sweep stores.
func ResultsPartsPrefix(sweepID string) string { return sweepKey(sweepID, "results/part-") }

// ResultsPartKey is result part number part (0, 1, …).
func ResultsPartKey(sweepID string, part int) string {
	return ResultsPartsPrefix(sweepID) + fmt.Sprintf("%06d.json", part)
}

// DecisionsPartsPrefix is the prefix of the parts of the log of scheduler decisions a running sweep
// stores.
func DecisionsPartsPrefix(sweepID string) string { return sweepKey(sweepID, "decisions/part-") }

// DecisionsPartKey is decision-log part number part (0, 1, …).
func DecisionsPartKey(sweepID string, part int) string {
	return DecisionsPartsPrefix(sweepID) + fmt.Sprintf("%06d.json", part)
}

// DecisionsKey is the whole log of scheduler decisions once the sweep has ended.
func DecisionsKey(sweepID string) string { return sweepKey(sweepID, "decisions.json") }

// ResultsKey is the sweep's results once it has ended.
func ResultsKey(sweepID string) string { return sweepKey(sweepID, "results.json") }

// ResultsCSVKey is results.json as a table.
func ResultsCSVKey(sweepID string) string { return sweepKey(sweepID, "results.csv") }

// RegressionKey is a nightly regression's comparison with its baseline.
func RegressionKey(sweepID string) string { return sweepKey(sweepID, "regression.json") }

// ReportKey is the sweep's HTML report.
func ReportKey(sweepID string) string { return sweepKey(sweepID, "report.html") }

// TrialsDir is the folder of a sweep's trials.
func TrialsDir(sweepID string) string { return sweepKey(sweepID, "trials") }

// TrialDir is a trial's folder: sweeps/<sweep-id>/trials/<trial-id>.
func TrialDir(sweepID, trialID string) string { return TrialsDir(sweepID) + "/" + Segment(trialID) }

// CheckpointKey is a checkpoint the trainer announced as rel (a clean relative key, CleanKey).
func CheckpointKey(sweepID, trialID, rel string) string {
	return TrialDir(sweepID, trialID) + "/checkpoints/" + rel
}

// CheckpointManifestKey is the manifest of the directory checkpoint stored under key (a CheckpointKey
// or an ExploitCheckpointKey): the object that announces it (see PutCheckpoint).
func CheckpointManifestKey(key string) string { return key + "/" + CheckpointManifestName }

// CheckpointTreeKey is the file rel (its slash-separated path in the directory) of the upload tree of
// the directory checkpoint stored under key.
func CheckpointTreeKey(key, tree, rel string) string { return key + "/" + tree + "/" + rel }

// ExploitKey is the record of a pbt exploit a trial made at step (or, for a member that replaced a
// diverged one, the checkpoint it started from): the decision log of method pbt.
func ExploitKey(sweepID, trialID string, step int64) string {
	return fmt.Sprintf("%s/exploits/%d.json", TrialDir(sweepID, trialID), step)
}

// ExploitCheckpointKey is a trial's own copy of the checkpoint it exploited at step, named as the
// source's.
func ExploitCheckpointKey(sweepID, trialID string, step int64, name string) string {
	return fmt.Sprintf("%s/exploits/%d/%s", TrialDir(sweepID, trialID), step, Segment(name))
}

// ResumePointKey records the last checkpoint a segment committed (resume.json).
func ResumePointKey(sweepID, trialID string) string {
	return TrialDir(sweepID, trialID) + "/resume.json"
}

// DivergenceKey is the dump of a trial a stop rule stopped.
func DivergenceKey(sweepID, trialID string) string {
	return TrialDir(sweepID, trialID) + "/divergence.json"
}

// MetricsDir is the folder of a trial's metrics parts: sweeps/<sweep-id>/trials/<trial-id>/metrics.
func MetricsDir(sweepID, trialID string) string {
	return TrialDir(sweepID, trialID) + "/" + metricsDirName
}

const metricsDirName = "metrics"

// MetricsPartKey is the key of part seq (0, 1, …) of a segment attempt's metrics.
func MetricsPartKey(sweepID, trialID string, segment int, attempt int32, seq int) string {
	return MetricsDir(sweepID, trialID) + "/" + metricsPartName(segment, attempt, seq)
}

func metricsPartName(segment int, attempt int32, seq int) string {
	return fmt.Sprintf("%06d-%06d-%08d.jsonl", segment, attempt, seq)
}

const logsDirName = "logs"

// LogsDir is the folder of a trial's logs: sweeps/<sweep-id>/trials/<trial-id>/logs.
func LogsDir(sweepID, trialID string) string { return TrialDir(sweepID, trialID) + "/" + logsDirName }

// LogDir is the folder of one segment attempt's log parts.
func LogDir(sweepID, trialID string, segment int, attempt int32) string {
	return LogsDir(sweepID, trialID) + "/" + logDirName(int64(segment), int64(attempt))
}

func logDirName(segment, attempt int64) string {
	return fmt.Sprintf("segment-%d-attempt-%d", segment, attempt)
}

// LogPartKey is the key of part seq (0, 1, …) of a segment attempt's log.
func LogPartKey(sweepID, trialID string, segment int, attempt int32, seq int) string {
	return LogDir(sweepID, trialID, segment, attempt) + "/" + fmt.Sprintf("%08d.log", seq)
}

// BaselinesDir is the folder of the stored baselines.
func BaselinesDir() string { return "baselines" }

// StoredBaselineKey is where `rlsweep baseline set` stores the baseline called name.
func StoredBaselineKey(name string) string { return BaselinesDir() + "/" + Segment(name) + ".json" }

// BaselineKey resolves a baseline reference: a sweep ID ("sweep/<name>/<id>") means that sweep's
// results.json; a bare name means the stored baseline baselines/<name>.json; anything else is a key.
func BaselineKey(ref string) string {
	switch {
	case strings.HasPrefix(ref, "sweep/"):
		return ResultsKey(ref)
	case !strings.Contains(ref, "/"):
		return StoredBaselineKey(ref)
	}
	return ref
}

// ScheduleSpecKey is where `rlsweep schedule create` stores the spec the schedule called name pins; its
// regression runs read it from there.
func ScheduleSpecKey(name string) string { return "schedules/" + Segment(name) + "/spec.yaml" }
