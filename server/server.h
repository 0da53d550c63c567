/*
 * `strata serve`: the Bolt server's sockets, threads and limits.
 */
#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H

/* argv[0] is "serve". */
int server_main(int argc, char **argv);

#endif
