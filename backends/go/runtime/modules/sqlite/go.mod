module svc.dev/runtime/modules/sqlite

go 1.26.0

require (
	github.com/dustin/go-humanize v1.1.0
	github.com/google/uuid v1.6.0
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec
	golang.org/x/sys v0.49.0
	modernc.org/libc v1.80.1
	modernc.org/mathutil v1.7.1
	modernc.org/memory v1.12.1
	modernc.org/sqlite v1.62.0
)
