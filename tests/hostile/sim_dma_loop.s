; issue 26: nested loops around one large dma.fill (janusc sim: cycle-limit / work-limit)
loop 16384, 2
loop 16384, 1
dma.fill r0, 0, 65536
halt
