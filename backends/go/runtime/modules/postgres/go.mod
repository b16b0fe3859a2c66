module svc.dev/runtime/modules/postgres

go 1.26.0

require (
	github.com/jackc/pgpassfile v1.0.0
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761
	github.com/jackc/pgx/v5 v5.12.0
	github.com/jackc/puddle/v2 v2.2.3
	golang.org/x/sync v0.24.0
	golang.org/x/text v0.42.0
)
