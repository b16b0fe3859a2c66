-- wrk's request for bench/throughput.py --tool wrk: POST /invoke with the
-- benchmark's body and key, passed in the environment by the script.
wrk.method = "POST"
wrk.body = os.getenv("SVC_BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = os.getenv("SVC_BENCH_KEY")
