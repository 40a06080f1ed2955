; janus emit golden: sigmoid_100 (tests/emit_golden/golden.cpp; update: see README.md here)
; Sigmoid: out = 1 / (1 + exp(-x)), 100 int8 elements, lut.apply, one tile
;   x: scale 0.05 zp -10, out: scale 0.00390625 zp -128 (the table is the weights region)
;   DRAM: x at input+0, out at output+0
;
; debug log:
;   sigmoid_100: stream of 112 B x 1 input(s): 1 tile(s) of 112 B; double buffering off: a single tile
;
; code: 12 instructions
li r1, 786432
li r2, 0
dma.cfg 1, 0, 0
dma.load r1, weights, r2, 256
li r1, 0
dma.cfg 1, 0, 0
li r2, 0
dma.load r1, input, r2, 112 signal(e0)
lut.apply r1, r1, 0, 112 wait(e0) signal(e1)
li r2, 0
dma.store output, r2, r1, 112 wait(e1)
halt
;
; weights region: 256 bytes
; 0000: 81 81 81 81 81 81 81 81 81 81 81 81 81 81 81 81
; 0010: 82 82 82 82 82 82 82 82 82 82 83 83 83 83 83 83
; 0020: 83 84 84 84 84 84 85 85 85 85 86 86 86 86 87 87
; 0030: 88 88 88 89 89 8a 8a 8b 8b 8c 8c 8d 8d 8e 8f 8f
; 0040: 90 91 92 93 93 94 95 96 97 98 9a 9b 9c 9d 9f a0
; 0050: a1 a3 a4 a6 a8 a9 ab ad af b1 b3 b5 b7 b9 bb be
; 0060: c0 c2 c5 c7 ca cd cf d2 d5 d8 db de e1 e4 e7 ea
; 0070: ed f0 f3 f6 fa fd 00 03 06 0a 0d 10 13 16 19 1c
; 0080: 1f 22 25 28 2b 2e 31 33 36 39 3b 3e 40 42 45 47
; 0090: 49 4b 4d 4f 51 53 55 57 58 5a 5c 5d 5f 60 61 63
; 00a0: 64 65 66 68 69 6a 6b 6c 6d 6d 6e 6f 70 71 71 72
; 00b0: 73 73 74 74 75 75 76 76 77 77 78 78 78 79 79 7a
; 00c0: 7a 7a 7a 7b 7b 7b 7b 7c 7c 7c 7c 7c 7d 7d 7d 7d
; 00d0: 7d 7d 7d 7e 7e 7e 7e 7e 7e 7e 7e 7e 7e 7f 7f 7f
; 00e0: 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f
; 00f0: 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f 7f
