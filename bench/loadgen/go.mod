module svcbench/loadgen

go 1.22
