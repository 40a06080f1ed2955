li r1, 0
li r2, 4096
li r3, 8192
li r5, 12288
li r4, 524288
li r6, 2048
dma.load r3, weights, r6, 528
dma.load r1, input, r0, 1024
dma.load r2, weights, r0, 2048 signal(e1)
mac.cfg 16, 64, 32, 64
mac.mm r4, r1, r2, -3 wait(e1) signal(e2)
vec.rq r5, r4, r3, 32, 16 wait(e2) signal(e3)
dma.store output, r0, r5, 512 wait(e3) signal(e4)
sync 0x0010, 0x0000
halt
