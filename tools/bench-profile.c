/*
 * bench-profile.c — `hybridinfer bench --profile`: where a hybridized
 * forward's time goes, layer by layer, as OpenVINO's benchmark_app -pc and
 * ONNX Runtime's profiler show it, with each product's GFLOP/s against the
 * FMA ceiling measured on this machine (cpu-peak.c) for the threads used.
 */
#include <stdio.h>

#include "cli.h"

void
hy_cli_print_profile (const hy_layer_profile *layers, int n_layers,
    double forward_ms, int threads)
{
  const char *isa;
  const double core_peak = hy_cli_fma_peak_gflops (&isa);
  const double peak = core_peak * MAX (threads, 1);
  g_autofree char *cpu = hy_cli_cpu_name ();
  double sum_ms = 0, sum_cpu_ms = 0, sum_flop = 0;
  for (int i = 0; i < n_layers; i++) {
    sum_ms += layers[i].ms;
    sum_cpu_ms += layers[i].cpu_ms;
    sum_flop += layers[i].flop;
  }

  printf ("\nprofile     %s; FMA ceiling %.1f GFLOP/s per core (%s, measured), "
      "%.1f for %d thread(s)\n", cpu, core_peak, isa, peak, threads);
  /* "cpu ms" is the CPU time of all threads: with one thread it stands up
   * to a busy machine, which stretches "ms" (wall clock). */
  printf ("%4s  %-36s %-16s %-15s %9s %9s %6s %9s %7s\n", "#", "layer", "op",
      "kernel", "ms", "cpu ms", "time", "GFLOP/s", "ceiling");
  for (int i = 0; i < n_layers; i++) {
    const hy_layer_profile *l = &layers[i];
    printf ("%4d  %-36.36s %-16.16s %-15.15s %9.4f %9.4f %5.1f%%", i, l->node,
        l->op, l->kernel ? l->kernel : "", l->ms, l->cpu_ms,
        sum_ms > 0 ? 100 * l->ms / sum_ms : 0);
    if (l->flop > 0 && l->ms > 0) {
      double gflops = l->flop / (l->ms * 1e6);
      printf (" %9.2f %6.1f%%", gflops, peak > 0 ? 100 * gflops / peak : 0);
    }
    printf ("\n");
  }
  printf ("total       %.3f ms over %d calls (%.2f GFLOP, %.2f GFLOP/s), "
      "%.3f ms of CPU time; a whole forward took %.3f ms (median): the "
      "calls account for %.1f%%\n", sum_ms, n_layers, sum_flop * 1e-9,
      sum_ms > 0 ? sum_flop / (sum_ms * 1e6) : 0, sum_cpu_ms, forward_ms,
      forward_ms > 0 ? 100 * sum_ms / forward_ms : 0);
}
