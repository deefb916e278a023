package activities

import "time"

// SetUploadRetry sets the background uploader's wait between tries, for a test; it returns the undo.
func SetUploadRetry(d time.Duration) (undo func()) {
	lo, hi := uploadRetryMin, uploadRetryMax
	uploadRetryMin, uploadRetryMax = d, d
	return func() { uploadRetryMin, uploadRetryMax = lo, hi }
}

// NearestMetric is nearestMetric, for a test.
var NearestMetric = nearestMetric
