; issue 26: nested loops around one large mac.mm (janusc sim: work-limit)
li r1, 0x80000
li r3, 0x10000
mac.cfg 16, 256, 256, 256
loop 16384, 2
loop 16384, 1
mac.mm r1, r0, r3, 0
halt
