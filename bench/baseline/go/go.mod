module svcbench/baseline

go 1.22
