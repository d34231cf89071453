module example.com/root

go 1.26.0
