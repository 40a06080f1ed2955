; janus emit golden: gemm_6x20x16_bias (tests/emit_golden/golden.cpp; update: see README.md here)
; Gemm: Y = A B + C, A 6x20, B 20x16, C: 16 int32 (scale sa sb per column, the bias column of the rq table), mac.mm + vec.rq
;   A: scale 0.05 zp 20, B: per-column scales 0.02 - 0.0007 n, zp 0, Y: scale 0.25 zp -4
;   C[n] = (7919 n mod 4001) - 2000; B = raw mt19937(9) bytes
;   DRAM: A at input+0 (pitch 32), Y at output+0 (pitch 16)
;
; debug log:
;   gemm_6x20x16_bias: matmul: 6x20x16 as 1 M tile(s) of 6 x 1 N tile(s) of 16; B loaded once; modelled 438 cycles
;
; code: 25 instructions
li r1, 0
li r2, 512
dma.cfg 1, 0, 0
dma.load r1, weights, r2, 272
li r1, 272
li r2, 784
li r3, 976
li r4, 524288
li r5, 1072
li r6, 1264
li r7, 524672
dma.cfg 1, 0, 0
li r9, 0
dma.load r1, weights, r9, 512
dma.cfg 6, 32, 32
li r9, 0
dma.load r2, input, r9, 32 signal(e0)
mac.cfg 6, 32, 16, 32
mac.mm r4, r2, r1, 20 wait(e0) signal(e1)
li r8, 0
vec.rq r3, r4, r8, 16, 6 wait(e1) signal(e2)
dma.cfg 6, 16, 16
li r9, 0
dma.store output, r9, r3, 16 wait(e2)
halt
;
; weights region: 784 bytes
; 0000: 02 5d 80 7f 7e 01 22 50 24 03 37 e0 6b 23 3f 23
; 0010: 15 65 58 7e 2a 50 e0 5f f3 bc 09 f7 b2 b3 92 22
; 0020: e5 22 aa f3 8c 8d b3 f1 62 a1 b1 90 d3 a3 77 c3
; 0030: f0 60 cd d5 fb 1a 2b 14 85 11 f2 7d a6 35 dc ec
; 0040: f8 fb 2f ab 3e 94 df cb e8 0b c2 94 58 13 76 28
; 0050: 9c 6f 7f 98 7a 23 6f e6 de fa 2f ee b0 64 b4 4a
; 0060: ec 51 0a fc a5 0a a3 2b 76 47 0d 67 09 ac 2b 3d
; 0070: cb 2d 29 20 23 11 5a a2 7c de b2 5a cd 08 44 c7
; 0080: e8 7a 05 12 60 e7 33 cd 57 01 71 37 7f ba 6a 51
; 0090: 36 8c 37 09 3b d1 ba 84 6a 84 95 d6 7e 02 6e 56
; 00a0: bc 93 8e 22 4d 25 f8 0d 39 8e 23 f6 9d b7 7d 91
; 00b0: 2e c9 1b fd 8a 0a 4a 48 1a b3 7d 26 a1 cf 09 07
; 00c0: 80 d6 15 5a ca 97 c2 01 43 cf 19 f0 ea 28 84 fb
; 00d0: 22 e6 1c 11 d7 bb 8b 74 42 c2 93 b9 50 cf ca 5d
; 00e0: 7e ec f7 8b 85 0a e7 e1 3f 91 85 03 81 92 d0 d8
; 00f0: 12 13 d6 c7 cd c1 68 cf 09 bb c4 08 ad ca eb 93
; 0100: 8f 7b f7 1d 4e f3 56 4b bb 2b b3 43 b9 4c e4 12
; 0110: b7 48 ae f6 d7 fa a5 44 4d 08 d4 f9 3e af b4 9f
; 0120: 89 25 61 68 2d 6f e2 56 14 34 cd 75 ae c9 76 be
; 0130: a9 97 48 81 dc cb 2d 7c 94 00 76 70 ac 05 79 84
; 0140: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 0150: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 0160: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 0170: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 0180: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 0190: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 01a0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 01b0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 01c0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 01d0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 01e0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 01f0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
; 0200: fc ff ff ff 80 ff ff ff 7f 00 00 00 00 00 00 00
; 0210: 30 f8 ff ff 44 37 89 41 26 00 00 00 00 00 00 00
; 0220: 7e 07 00 00 86 06 7c 7e 27 00 00 00 00 00 00 00
; 0230: 2b 07 00 00 52 9f e5 79 27 00 00 00 00 00 00 00
; 0240: d8 06 00 00 51 37 4f 75 27 00 00 00 00 00 00 00
; 0250: 85 06 00 00 1c d0 b8 70 27 00 00 00 00 00 00 00
; 0260: 32 06 00 00 1b 68 22 6c 27 00 00 00 00 00 00 00
; 0270: df 05 00 00 1a 00 8c 67 27 00 00 00 00 00 00 00
; 0280: 8c 05 00 00 7f 98 f5 62 27 00 00 00 00 00 00 00
; 0290: 39 05 00 00 e4 30 5f 5e 27 00 00 00 00 00 00 00
; 02a0: e6 04 00 00 4a c9 c8 59 27 00 00 00 00 00 00 00
; 02b0: 93 04 00 00 af 61 32 55 27 00 00 00 00 00 00 00
; 02c0: 40 04 00 00 ae f9 9b 50 27 00 00 00 00 00 00 00
; 02d0: ed 03 00 00 13 92 05 4c 27 00 00 00 00 00 00 00
; 02e0: 9a 03 00 00 78 2a 6f 47 27 00 00 00 00 00 00 00
; 02f0: 47 03 00 00 77 c2 d8 42 27 00 00 00 00 00 00 00
; 0300: f4 02 00 00 b9 b5 84 7c 28 00 00 00 00 00 00 00
