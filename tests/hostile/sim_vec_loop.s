; issue 26: nested loops around one large vec.max (janusc sim: cycle-limit, work-limit)
li r2, 0x10000
loop 16384, 2
loop 16384, 1
vec.max r1, r1, r2, 65536
halt
