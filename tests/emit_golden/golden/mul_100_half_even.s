; janus emit golden: mul_100_half_even (tests/emit_golden/golden.cpp; update: see README.md here)
; Mul: out = a * b, 100 int8 elements, vec.ew.mul, one tile
;   a: scale 0.1 zp 1, b: scale 0.3 zp -7, out: scale 0.07 zp 2, rounding half_even
;   DRAM: a at input+0, b at input+112, out at output+0
;
; debug log:
;   mul_100_half_even: stream of 112 B x 2 input(s): 1 tile(s) of 112 B; double buffering off: a single tile
;
; code: 16 instructions
li r1, 0
li r2, 0
dma.cfg 1, 0, 0
dma.load r1, weights, r2, 48
li r1, 0
li r2, 48
li r3, 160
dma.cfg 1, 0, 0
li r4, 0
dma.load r2, input, r4, 112
li r4, 112
dma.load r3, input, r4, 112 signal(e0)
vec.ew.mul r2, r2, r3, r1, 112 wait(e0) signal(e1)
li r4, 0
dma.store output, r4, r2, 112 wait(e1)
halt
;
; weights region: 48 bytes
; 0000: 01 00 00 00 f9 ff ff ff 02 00 00 00 00 00 00 00
; 0010: 00 00 00 00 1f 00 00 00 00 00 00 00 1f 00 00 00
; 0020: ca db b6 6d 20 00 00 00 ab 04 00 00 02 00 00 00
