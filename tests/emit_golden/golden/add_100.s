; janus emit golden: add_100 (tests/emit_golden/golden.cpp; update: see README.md here)
; Add: out = a + b, 100 int8 elements, vec.ew.add, tiles of at most 32 B
;   a: scale 0.1 zp 5, b: scale 0.05 zp -5, out: scale 0.12 zp 1, rounding double
;   DRAM: a at input+0, b at input+112, out at output+0
;
; debug log:
;   add_100: stream of 112 B x 2 input(s): 4 tile(s) of 32 B, double buffered
;
; code: 39 instructions
li r1, 0
li r2, 0
dma.cfg 1, 0, 0
dma.load r1, weights, r2, 48
li r1, 0
li r2, 48
li r3, 80
li r4, 112
li r5, 144
dma.cfg 1, 0, 0
li r6, 0
dma.load r2, input, r6, 32
li r6, 112
dma.load r3, input, r6, 32 signal(e0)
li r6, 32
dma.load r4, input, r6, 32
li r6, 144
dma.load r5, input, r6, 32 signal(e0)
vec.ew.add r2, r2, r3, r1, 32 wait(e0) signal(e1)
li r6, 0
dma.store output, r6, r2, 32 wait(e1)
li r6, 64
dma.load r2, input, r6, 32
li r6, 176
dma.load r3, input, r6, 32 signal(e0)
vec.ew.add r4, r4, r5, r1, 32 wait(e0) signal(e1)
li r6, 32
dma.store output, r6, r4, 32 wait(e1)
li r6, 96
dma.load r4, input, r6, 16
li r6, 208
dma.load r5, input, r6, 16 signal(e0)
vec.ew.add r2, r2, r3, r1, 32 wait(e0) signal(e1)
li r6, 64
dma.store output, r6, r2, 32 wait(e1)
vec.ew.add r4, r4, r5, r1, 16 wait(e0) signal(e1)
li r6, 96
dma.store output, r6, r4, 16 wait(e1)
halt
;
; weights region: 48 bytes
; 0000: 05 00 00 00 fb ff ff ff 01 00 00 00 14 00 00 00
; 0010: 00 00 00 40 1f 00 00 00 00 00 00 40 20 00 00 00
; 0020: ed aa aa 6a 32 00 00 00 28 33 33 13 00 00 00 00
