; janus emit golden: depthwise_3x3_3x4x13 (tests/emit_golden/golden.cpp; update: see README.md here)
; Conv (depthwise, group = C): 3x4x13 NHWC (channel pitch 16) -> 3x4x13, 3x3 kernel, pads 1 1 1 1, stride 1
;   vec.mac per tap + vec.rq per row; x: scale 0.04 zp -7, w: per-channel scales 0.01 + 0.001 c, zp 0, y: scale 0.15 zp -6
;   bias[c] = 300 c - 1800; w = raw mt19937(11) bytes (ONNX order C x 1 x 3 x 3)
;   DRAM: x at input+0, y at output+0
;
; debug log:
;   depthwise_3x3_3x4x13: depthwise: 3 output rows of 4 x 16 B, 9 vec.mac per row, double buffered
;
; code: 146 instructions
li r1, 0
li r2, 0
dma.cfg 1, 0, 0
dma.load r1, weights, r2, 576
li r1, 576
li r2, 576
dma.cfg 1, 0, 0
dma.load r1, weights, r2, 272
dma.cfg 3, 0, 96
li r1, 848
dma.fill r1, -7, 16
li r1, 928
dma.fill r1, -7, 16
dma.cfg 3, 0, 96
li r1, 1200
dma.fill r1, -7, 16
li r1, 1280
dma.fill r1, -7, 16
dma.cfg 1, 0, 0
li r1, 524288
dma.fill r1, 0, 256
li r1, 848
dma.fill r1, -7, 96
dma.cfg 2, 64, 96
li r1, 960
li r2, 0
dma.load r1, input, r2, 64 signal(e0)
dma.cfg 1, 0, 0
li r1, 524544
dma.fill r1, 0, 256
dma.cfg 3, 64, 96
li r1, 1216
li r2, 0
dma.load r1, input, r2, 64 signal(e0)
li r3, 524288
li r1, 848
li r2, 0
vec.mac r3, r1, r2, -7, 64 wait(e0)
li r1, 864
li r2, 64
vec.mac r3, r1, r2, -7, 64
li r1, 880
li r2, 128
vec.mac r3, r1, r2, -7, 64
li r1, 944
li r2, 192
vec.mac r3, r1, r2, -7, 64
li r1, 960
li r2, 256
vec.mac r3, r1, r2, -7, 64
li r1, 976
li r2, 320
vec.mac r3, r1, r2, -7, 64
li r1, 1040
li r2, 384
vec.mac r3, r1, r2, -7, 64
li r1, 1056
li r2, 448
vec.mac r3, r1, r2, -7, 64
li r1, 1072
li r2, 512
vec.mac r3, r1, r2, -7, 64
li r1, 1136
li r2, 576
vec.rq r1, r3, r2, 16, 4 signal(e1)
dma.cfg 1, 0, 0
li r2, 0
dma.store output, r2, r1, 64 wait(e1)
dma.cfg 1, 0, 0
li r1, 524288
dma.fill r1, 0, 256
li r1, 1040
dma.fill r1, -7, 96
dma.cfg 2, 64, 96
li r1, 864
li r2, 64
dma.load r1, input, r2, 64 signal(e0)
li r3, 524544
li r1, 1200
li r2, 0
vec.mac r3, r1, r2, -7, 64 wait(e0)
li r1, 1216
li r2, 64
vec.mac r3, r1, r2, -7, 64
li r1, 1232
li r2, 128
vec.mac r3, r1, r2, -7, 64
li r1, 1296
li r2, 192
vec.mac r3, r1, r2, -7, 64
li r1, 1312
li r2, 256
vec.mac r3, r1, r2, -7, 64
li r1, 1328
li r2, 320
vec.mac r3, r1, r2, -7, 64
li r1, 1392
li r2, 384
vec.mac r3, r1, r2, -7, 64
li r1, 1408
li r2, 448
vec.mac r3, r1, r2, -7, 64
li r1, 1424
li r2, 512
vec.mac r3, r1, r2, -7, 64
li r1, 1488
li r2, 576
vec.rq r1, r3, r2, 16, 4 signal(e1)
dma.cfg 1, 0, 0
li r2, 64
dma.store output, r2, r1, 64 wait(e1)
li r3, 524288
li r1, 848
li r2, 0
vec.mac r3, r1, r2, -7, 64 wait(e0)
li r1, 864
li r2, 64
vec.mac r3, r1, r2, -7, 64
li r1, 880
li r2, 128
vec.mac r3, r1, r2, -7, 64
li r1, 944
li r2, 192
vec.mac r3, r1, r2, -7, 64
li r1, 960
li r2, 256
vec.mac r3, r1, r2, -7, 64
li r1, 976
li r2, 320
vec.mac r3, r1, r2, -7, 64
li r1, 1040
li r2, 384
vec.mac r3, r1, r2, -7, 64
li r1, 1056
li r2, 448
vec.mac r3, r1, r2, -7, 64
li r1, 1072
li r2, 512
vec.mac r3, r1, r2, -7, 64
li r1, 1136
li r2, 576
vec.rq r1, r3, r2, 16, 4 signal(e1)
dma.cfg 1, 0, 0
li r2, 128
dma.store output, r2, r1, 64 wait(e1)
halt
;
; weights region: 848 bytes
; 0000: 2e 1a d9 96 50 30 99 71 fc 0b 4a d2 bb 00 00 00
; 0010: 2e 1a d9 96 50 30 99 71 fc 0b 4a d2 bb 00 00 00
; 0020: 2e 1a d9 96 50 30 99 71 fc 0b 4a d2 bb 00 00 00
; 0030: 2e 1a d9 96 50 30 99 71 fc 0b 4a d2 bb 00 00 00
; 0040: 11 7c e3 2a c7 51 7b b7 ad 5d ec 9d aa 00 00 00
; 0050: 11 7c e3 2a c7 51 7b b7 ad 5d ec 9d aa 00 00 00
; 0060: 11 7c e3 2a c7 51 7b b7 ad 5d ec 9d aa 00 00 00
; 0070: 11 7c e3 2a c7 51 7b b7 ad 5d ec 9d aa 00 00 00
; 0080: 04 39 ba bc 28 34 0e e5 56 32 ca 0c 10 00 00 00
; 0090: 04 39 ba bc 28 34 0e e5 56 32 ca 0c 10 00 00 00
; 00a0: 04 39 ba bc 28 34 0e e5 56 32 ca 0c 10 00 00 00
; 00b0: 04 39 ba bc 28 34 0e e5 56 32 ca 0c 10 00 00 00
; 00c0: aa 03 b6 a1 06 1c c8 9a 7c 11 ad 5c fe 00 00 00
; 00d0: aa 03 b6 a1 06 1c c8 9a 7c 11 ad 5c fe 00 00 00
; 00e0: aa 03 b6 a1 06 1c c8 9a 7c 11 ad 5c fe 00 00 00
; 00f0: aa 03 b6 a1 06 1c c8 9a 7c 11 ad 5c fe 00 00 00
; 0100: 76 e5 1b ac c2 dd 7a 11 3d 79 e7 be 05 00 00 00
; 0110: 76 e5 1b ac c2 dd 7a 11 3d 79 e7 be 05 00 00 00
; 0120: 76 e5 1b ac c2 dd 7a 11 3d 79 e7 be 05 00 00 00
; 0130: 76 e5 1b ac c2 dd 7a 11 3d 79 e7 be 05 00 00 00
; 0140: 31 7c 84 05 eb 15 0b 8d 6d 51 fc 2b 51 00 00 00
; 0150: 31 7c 84 05 eb 15 0b 8d 6d 51 fc 2b 51 00 00 00
; 0160: 31 7c 84 05 eb 15 0b 8d 6d 51 fc 2b 51 00 00 00
; 0170: 31 7c 84 05 eb 15 0b 8d 6d 51 fc 2b 51 00 00 00
; 0180: b9 d3 e4 f8 d1 27 66 81 cb 09 ca 43 c5 00 00 00
; 0190: b9 d3 e4 f8 d1 27 66 81 cb 09 ca 43 c5 00 00 00
; 01a0: b9 d3 e4 f8 d1 27 66 81 cb 09 ca 43 c5 00 00 00
; 01b0: b9 d3 e4 f8 d1 27 66 81 cb 09 ca 43 c5 00 00 00
; 01c0: ed f1 c9 1d 69 b6 9f f2 65 12 78 6f c9 00 00 00
; 01d0: ed f1 c9 1d 69 b6 9f f2 65 12 78 6f c9 00 00 00
; 01e0: ed f1 c9 1d 69 b6 9f f2 65 12 78 6f c9 00 00 00
; 01f0: ed f1 c9 1d 69 b6 9f f2 65 12 78 6f c9 00 00 00
; 0200: 6b 17 db fd 58 c6 d9 77 10 01 8f fa 4c 00 00 00
; 0210: 6b 17 db fd 58 c6 d9 77 10 01 8f fa 4c 00 00 00
; 0220: 6b 17 db fd 58 c6 d9 77 10 01 8f fa 4c 00 00 00
; 0230: 6b 17 db fd 58 c6 d9 77 10 01 8f fa 4c 00 00 00
; 0240: fa ff ff ff 80 ff ff ff 7f 00 00 00 00 00 00 00
; 0250: f8 f8 ff ff 94 9e 61 57 27 00 00 00 00 00 00 00
; 0260: 24 fa ff ff f1 94 1e 60 27 00 00 00 00 00 00 00
; 0270: 50 fb ff ff 4f 8b db 68 27 00 00 00 00 00 00 00
; 0280: 7c fc ff ff ac 81 98 71 27 00 00 00 00 00 00 00
; 0290: a8 fd ff ff 09 78 55 7a 27 00 00 00 00 00 00 00
; 02a0: d4 fe ff ff 33 37 89 41 26 00 00 00 00 00 00 00
; 02b0: 00 00 00 00 d9 b1 e7 45 26 00 00 00 00 00 00 00
; 02c0: 2c 01 00 00 90 2d 46 4a 26 00 00 00 00 00 00 00
; 02d0: 58 02 00 00 37 a8 a4 4e 26 00 00 00 00 00 00 00
; 02e0: 84 03 00 00 ee 23 03 53 26 00 00 00 00 00 00 00
; 02f0: b0 04 00 00 94 9e 61 57 26 00 00 00 00 00 00 00
; 0300: dc 05 00 00 4b 1a c0 5b 26 00 00 00 00 00 00 00
; 0310: 08 07 00 00 f1 94 1e 60 26 00 00 00 00 00 00 00
; 0320: 00 00 00 00 94 9e 61 57 27 00 00 00 00 00 00 00
; 0330: 00 00 00 00 94 9e 61 57 27 00 00 00 00 00 00 00
; 0340: 00 00 00 00 94 9e 61 57 27 00 00 00 00 00 00 00
