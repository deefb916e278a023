// Package diagnostics holds the streaming rules engine that stops diverging runs, the doctor that
// explains a finished run, and run statistics, all over the records and canonical metric names of
// package metrics.
//
// It is a pure package: no Temporal, no network, no files it did not get handed.
package diagnostics
