# Draws readers_fanout.dat (written by readers_fanout.sh).  Standalone:
#   gnuplot -e "dat='bench/plots/readers_fanout.dat'; png='bench/plots/readers_fanout.png'; \
#               when='2026-11-30'; machine='2-core Xeon, shared'" bench/plots/readers_fanout.gp
if (!exists("dat")) dat = 'readers_fanout.dat'
if (!exists("png")) png = 'readers_fanout.png'
if (!exists("when")) when = ''
if (!exists("machine")) machine = ''

# Waves per case, for the note (before any axis range applies).
stats dat using 3 nooutput
waves = int(STATS_max)

set terminal pngcairo size 800,500 font 'DejaVu Sans,9' noenhanced
set output png
set title sprintf("strata W2: reader fanout, R threads x 128 point lookups per wave (10,000 records)\n%s, %s", when, machine)
set logscale y
set xrange [0.5:8.7]
set xtics (1, 4, 8)
set yrange [1e4:1e7]
set ytics ("10 k/s" 1e4, "30 k/s" 3e4, "100 k/s" 1e5, "300 k/s" 3e5, "1 M/s" 1e6, "3 M/s" 3e6, \
           "10 M/s" 1e7)
set mytics 10
set xlabel "reader threads per wave (R)"
set ylabel "lookups per second at the median wave (log scale)"
set grid xtics ytics lc rgb '#dddddd'
set key at screen 0.625,0.89 left top vertical Left reverse samplen 3 spacing 1.2
set rmargin at screen 0.60
set label 1 at screen 0.625,0.58 left font 'DejaVu Sans,8' sprintf( \
    "Median of %d waves per engine and R,\nthe engines alternating wave by wave.\nA wave runs from the first\npthread_create to the last join.\nLabels: SQLite's median wave time\nover strata's (the speed-up).\nSeed 001 (Criterion estimates) and\nthe ceiling use the same R x 128.", waves)

# Column 10 is SQLite's median over strata's: the speed-up, written above
# each strata point.
plot \
    dat using 1:6 with linespoints lc rgb '#1f77b4' lw 2 pt 7 ps 1.2 \
        title 'strata (view per reader)', \
    dat using 1:9 with linespoints lc rgb '#ff7f0e' lw 2 pt 5 ps 1.1 \
        title 'SQLite WAL (connection per reader)', \
    dat using 1:6:(sprintf("%.1fx", $10)) with labels offset 0,1.1 tc rgb '#1f77b4' notitle, \
    dat using 1:(($2)/($11/1e3)) with lines lc rgb '#999999' lw 1.5 dt 3 \
        title 'ceiling: wave of empty threads', \
    dat using 1:13 with linespoints lc rgb '#ff7f0e' lw 1 dt 2 pt 4 ps 1.1 \
        title 'seed 001: SQLite WAL', \
    dat using 1:12 with linespoints lc rgb '#7f7f7f' lw 1 dt 2 pt 6 ps 1.1 \
        title 'seed 001: Tosumu (Mutex<BTree>)'
