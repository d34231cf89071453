module example.com/root/nested

go 1.26.0

require example.com/root v0.0.0-20261124002345-fbd8e58f95aa
