module pprofsample

go 1.19
