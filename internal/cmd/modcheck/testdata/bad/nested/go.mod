module example.com/root/nested

go 1.26.0

require example.com/root v0.0.0-00010101000000-000000000000
