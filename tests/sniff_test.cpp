// What kind of text an input is.
#include "sniff/sniff.h"

#include <doctest/doctest.h>

using namespace faultline;

TEST_CASE("sniff: lines the state readers took as a device dump are nvidia-smi output") {
  // `nvidia-smi nvlink -e` (stas00/ml-engineering debug.md): nothing in the lines themselves
  // says nvidia-smi; the state reader's say does.
  KindSniffer dump;
  dump.Observe("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)",
               true);
  dump.Observe("         Link 0: Replay Errors: 0", true);
  CHECK(dump.kind() == InputKind::kNvidiaSmi);

  KindSniffer prose;
  prose.Observe("         Link 0: Replay Errors: 0", false);
  CHECK(prose.kind() == InputKind::kText);
}

TEST_CASE("sniff: nvidia-smi failing to open a GPU is nvidia-smi output") {
  // pdbear/syno_nvidia_gpu_driver#22, verbatim.
  KindSniffer sniffer;
  sniffer.Observe("$ nvidia-smi", false);
  sniffer.Observe("Unable to determine the device handle for GPU0000:07:00.0: Unknown Error",
                  false);
  CHECK(sniffer.kind() == InputKind::kNvidiaSmi);
}
