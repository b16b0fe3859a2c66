module svc.dev/bench/modelstub

go 1.22
