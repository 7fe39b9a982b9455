/*
 * hybridinfer.c — the command-line tool: run, inspect, export, quantize.
 *
 *   hybridinfer run --model M-symbol.json --input data=x.npy --output-dir out
 *   hybridinfer inspect --model M-symbol.json --shape 1x3x224x224 [--json]
 *   hybridinfer export --model M-symbol.json --prefix out/model [--epoch N]
 *   hybridinfer diff DUMP_A DUMP_B [--rtol R] [--atol A] [--json]
 *   hybridinfer bench --model M-symbol.json --shape 1x3x224x224 [--json]
 *   hybridinfer quantize M-symbol.json --calib DIR --calib-mode naive -o out/m
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct command {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
  {"run", hy_cmd_run, "run one forward on .npy inputs, write .npy outputs"},
  {"inspect", hy_cmd_inspect, "show a model's ops, shapes and parameters"},
  {"export", hy_cmd_export, "write the model as MXNet 1.9.1 export files"},
  {"diff", hy_cmd_diff, "find the first layer where two layer dumps differ"},
  {"bench", hy_cmd_bench, "time forwards: latency, throughput, memory"},
  {"quantize", hy_cmd_quantize, "calibrate and write an int8 model MXNet loads"},
};

static int
usage (FILE *out)
{
  fprintf (out, "usage: hybridinfer COMMAND [OPTIONS]\n\ncommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\n'hybridinfer COMMAND --help' lists a command's options.\n");
  return out == stderr ? HY_EXIT_USAGE : HY_EXIT_OK;
}

int
main (int argc, char **argv)
{
  hy_cli_tune_blas (argv);
  if (argc < 2)
    return usage (stderr);
  if (!strcmp (argv[1], "--help") || !strcmp (argv[1], "-h")
      || !strcmp (argv[1], "help"))
    return usage (stdout);
  if (!strcmp (argv[1], "--version")) {
    printf ("hybridinfer 0.1.0 (OpenBLAS core: %s)\n", hy_blas_core_name ());
    return HY_EXIT_OK;
  }
  for (size_t i = 0; i < G_N_ELEMENTS (commands); i++) {
    if (!strcmp (argv[1], commands[i].name)) {
      g_autofree char *prg = g_strdup_printf ("hybridinfer %s", argv[1]);
      g_set_prgname (prg);
      return commands[i].run (argc - 1, argv + 1);
    }
  }
  fprintf (stderr, "hybridinfer: unknown command '%s'\n", argv[1]);
  return usage (stderr);
}
