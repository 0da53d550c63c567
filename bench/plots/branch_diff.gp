# Draws branch_diff.dat (written by branch_diff.sh).
if (!exists("dat")) dat = 'branch_diff.dat'
if (!exists("png")) png = 'branch_diff.png'
if (!exists("when")) when = ''
if (!exists("machine")) machine = ''

set terminal pngcairo size 800,500 font 'DejaVu Sans,9' noenhanced
set output png
set title sprintf("strata_diff: time against changes, per graph size (medians)\n%s, %s", when, machine)
set logscale xy
set xrange [0.7:15000]
set xlabel "changes between the two views (k SETs, log scale)"
set ylabel "microseconds per diff (log scale)"
set grid xtics ytics lc rgb '#dddddd'
set key left top
set arrow from 100,0.1 to 100,100 nohead dt 2 lc rgb '#888888'
set arrow from 0.7,100 to 100,100 nohead dt 2 lc rgb '#888888'
set label "target: 100 changes <= 100 us" at 1.2,140 textcolor rgb '#555555'
plot for [n in "10000 100000 1000000"] dat using ($1 == n ? $2 : NaN):3 \
     with linespoints lw 2 pt 7 title sprintf("N = %s nodes", n), \
     x * 0.25 with lines dt 3 lc rgb 'black' title 'linear in k (for reference)'
