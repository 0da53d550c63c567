/* import — `strata import`: bulk load CSV files into a new saved graph
   (docs/IMPORT.md; import.c describes the command). */
#ifndef STRATA_CLI_IMPORT_H
#define STRATA_CLI_IMPORT_H

/* argv[0] is "import"; returns the exit status (0 done, 1 the import
   failed and nothing was written, 2 bad usage). */
int import_main(int argc, char **argv);

#endif
