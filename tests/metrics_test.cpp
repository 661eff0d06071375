#include "metrics/metrics.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "envelope/envelope.h"

using namespace faultline;

namespace {

std::vector<Series> read(std::initializer_list<std::string_view> lines,
                         const std::string& path = "train.log") {
  MetricsReader reader(path, "node-1");
  uint64_t number = 0;
  for (std::string_view line : lines) reader.Feed(line, ++number);
  return reader.Finish();
}

// The only point of the only series `lines` yield.
MetricPoint only_point(std::initializer_list<std::string_view> lines) {
  const auto series = read(lines);
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].points().size() == 1);
  return series[0].points()[0];
}

using P = MetricPoint;

}  // namespace

// ---- Rank tags (training-logs.md §6, §10) -----------------------------------------------------

TEST_CASE("rank prefix: PyTorch's global tag, torchrun's local tee header") {
  auto tag = parse_rank_prefix("[rank3]: RuntimeError: CUDA error");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK_FALSE(tag->is_local);
  CHECK(tag->prefix_length == 9);
  tag = parse_rank_prefix("[rank12]:[E ProcessGroupNCCL.cpp:1316] x");
  REQUIRE(tag);
  CHECK(tag->rank == 12);
  CHECK(tag->prefix_length == 9);
  tag = parse_rank_prefix("[default3]: [2024-04-06 03:02:12] iteration");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK(tag->is_local);
  CHECK(tag->source == RankTag::Source::kTorchrunTee);
}

TEST_CASE("rank prefix: srun --label and Open MPI --tag-output") {
  auto tag = parse_rank_prefix("3: step=1 loss=2");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK(tag->prefix_length == 3);
  tag = parse_rank_prefix(" 7: x");  // right-aligned with 10 or more tasks
  REQUIRE(tag);
  CHECK(tag->rank == 7);
  tag = parse_rank_prefix("[1,3]<stdout>:Step #0\tLoss: 2.324532");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK_FALSE(tag->is_local);
  CHECK(tag->prefix_length == 14);
  tag = parse_rank_prefix("[prterun-f5n18-100629@1,0]<stdout>: f5n18");
  REQUIRE(tag);
  CHECK(tag->rank == 0);
  CHECK(tag->source == RankTag::Source::kOpenMpi);
  // horovodrun --gloo: the rank alone (horovod/horovod#3673, pytorch/ignite#3466).
  tag = parse_rank_prefix("[0]<stdout>:72d576acb451:1704:1899 [0] NCCL INFO init.cc:913 -> 1");
  REQUIRE(tag);
  CHECK(tag->rank == 0);
  CHECK_FALSE(tag->is_local);
  CHECK(tag->prefix_length == 12);
  tag = parse_rank_prefix("[1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)");
  REQUIRE(tag);
  CHECK(tag->rank == 1);
  CHECK_FALSE(parse_rank_prefix("[1]<html>: x"));
  CHECK_FALSE(parse_rank_prefix("[x]<stdout>: x"));
}

TEST_CASE("rank prefix: what is not a rank tag") {
  CHECK_FALSE(parse_rank_prefix(" [2024-04-06 03:02:12] iteration       71/     100 |"));
  CHECK_FALSE(parse_rank_prefix("[  219.470994] NVRM: Xid"));
  CHECK_FALSE(parse_rank_prefix("10:15:30 started"));
  CHECK_FALSE(parse_rank_prefix("[E ProcessGroupNCCL.cpp:475] x"));
  CHECK_FALSE(parse_rank_prefix(""));
}

TEST_CASE("rank prefixes stack: the innermost global rank wins") {
  auto tag = parse_rank_prefixes("[default2]:[rank2]: RuntimeError: x");
  REQUIRE(tag);
  CHECK(tag->rank == 2);
  CHECK_FALSE(tag->is_local);
  CHECK(tag->prefix_length == 20);
  tag = parse_rank_prefixes("[1,5]<stdout>:[default1]:step=3 loss=1");
  REQUIRE(tag);
  CHECK(tag->rank == 5);
  CHECK(tag->prefix_length == 25);
  tag = parse_rank_prefixes("[default4]:hello");
  REQUIRE(tag);
  CHECK(tag->is_local);
  CHECK_FALSE(parse_rank_prefixes("hello"));
}

TEST_CASE("rank prefixes behind what carried or pasted the line") {
  // kubectl logs --timestamps (a vLLM issue, code index 56955641363).
  auto tag = parse_rank_prefixes(
      "2024-07-11T12:28:23.200321639Z [rank0]: File \"/usr/local/lib/python3.10/dist-packages/vllm/"
      "model_executor/models/phi3_small.py\", line 361, in __init__");
  REQUIRE(tag);
  CHECK(tag->rank == 0);
  CHECK(tag->prefix_length == 40);
  // A paste's line numbers (hiyouga/LlamaFactory#7396).
  tag = parse_rank_prefixes(
      "[80749] [rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception "
      "(either an error or timeout) detected by watchdog at work: 1580");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK(tag->prefix_length == 16);
  // A markdown quote of a Horovod run (horovod/horovod#2365).
  tag = parse_rank_prefixes("> [1,12]<stderr>:terminate called after throwing an instance of");
  REQUIRE(tag);
  CHECK(tag->rank == 12);
  // A collector's stream label (the shape issue 15 names; no public GPU log with it was found)
  // before the same line.
  tag = parse_rank_prefixes(
      "[stderr] [rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] "
      "Exception (either an error or timeout) detected by watchdog at work: 1580");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK(tag->prefix_length == 17);
  // An envelope with no tag after it is no tag.
  CHECK_FALSE(parse_rank_prefixes("[stdout] hello"));
  CHECK_FALSE(parse_rank_prefixes("2024-07-11T12:28:23.200321639Z RuntimeError: CUDA error"));
  CHECK_FALSE(parse_rank_prefixes("[80749] hello"));
  CHECK_FALSE(parse_rank_prefixes("> > > > [rank1]: too deep"));
}

TEST_CASE("rank from a path") {
  auto tag = rank_from_path("logs/rank3.log");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK_FALSE(tag->is_local);
  CHECK(rank_from_path("samples/a100-contained-ecc/train-rank3.log")->rank == 3);
  CHECK(rank_from_path("out/rank_12/stdout.txt")->rank == 12);
  CHECK(rank_from_path("out/Rank-04.log.gz")->rank == 4);
  tag = rank_from_path("/tmp/logs/run_ab12cd/attempt_0/3/stdout.log");
  REQUIRE(tag);
  CHECK(tag->rank == 3);
  CHECK(tag->is_local);
  CHECK(rank_from_path("node/local_rank2.txt")->is_local);
  CHECK_FALSE(rank_from_path("logs/frank3.log"));
  CHECK_FALSE(rank_from_path("logs/ranking.log"));
  CHECK_FALSE(rank_from_path("logs/node17/dmesg.txt"));
  CHECK_FALSE(rank_from_path("-"));
}

// ---- Formats: the verbatim examples of training-logs.md ---------------------------------------

TEST_CASE("Megatron-LM iteration line (NVIDIA/Megatron-LM#756)") {
  const P p = only_point(
      {" [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | "
       "elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | "
       "learning rate: 1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | "
       "load_balancing_loss: 1.013377E+00 | loss scale: 1.0 | grad norm: 1.300 | num zeros: 0.0 "
       "| number of skipped iterations:   0 | number of nan iterations:   0 |"});
  CHECK(p.step == 71);
  CHECK(p.line == 1);
  CHECK(p.loss == doctest::Approx(1.818812));
  CHECK(p.learning_rate == doctest::Approx(1.42e-05));
  CHECK(p.grad_norm == doctest::Approx(1.3));
  CHECK(p.loss_scale == 1.0f);
  CHECK(p.iteration_seconds == doctest::Approx(5.3616));
  CHECK(p.throughput == doctest::Approx(243.6));
  CHECK(p.has(P::kSkipped));
  CHECK(p.skipped == 0);
  CHECK(p.nan_iterations == 0);
  REQUIRE(p.has(P::kTime));
  CHECK(p.time == unix_seconds(2024, 4, 6, 3, 2, 12));
  CHECK_FALSE(p.has(P::kLossInferred));
}

TEST_CASE("Megatron-LM: a NaN interval prints no lm loss, only the nan-iteration counter") {
  const auto series =
      read({" [2024-04-06 03:02:12] iteration       10/     100 | consumed samples:         1280 | "
            "elapsed time per iteration (ms): 5361.6 | learning rate: 1.420000E-05 | global batch "
            "size:   128 | lm loss: 2.000000E+00 | loss scale: 1.0 | grad norm: 1.300 | number of "
            "skipped iterations:   0 | number of nan iterations:   0 |",
            " [2024-04-06 03:03:05] iteration       20/     100 | consumed samples:         2560 | "
            "elapsed time per iteration (ms): 5361.6 | learning rate: 1.420000E-05 | global batch "
            "size:   128 | loss scale: 1.0 | grad norm: nan | number of skipped iterations:   0 | "
            "number of nan iterations:   3 |"});
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].points().size() == 2);
  const P& nan = series[0].points()[1];
  CHECK(nan.step == 20);
  CHECK(nan.loss_nonfinite());
  CHECK(nan.has(P::kLossInferred));
  CHECK(nan.grad_norm_nonfinite());
  CHECK(nan.nan_iterations == 3);
}

TEST_CASE("Megatron-DeepSpeed and the BigScience fork: other fields, seconds per iteration") {
  const P p = only_point(
      {" iteration      500/  100000 | consumed samples:        64000 | consumed tokens:     "
       "131072000 | elapsed time per iteration (s): 1.25 | learning rate: 6.000E-05 | global "
       "batch size:   128 | lm loss: 4.112345E+00 | loss scale: 4096.0 | grad norm: 0.512 | "
       "actual seqlen:  2048 | number of skipped iterations:   1 | number of nan iterations:   "
       "0 | samples per second: 102.400 | tokens per gpu per second (tgs): 3276.800 | TFLOPs: "
       "98.12 |"});
  CHECK(p.step == 500);
  CHECK(p.loss == doctest::Approx(4.112345));
  CHECK(p.iteration_seconds == doctest::Approx(1.25));
  CHECK(p.loss_scale == 4096.0f);
  CHECK(p.skipped == 1);
  CHECK_FALSE(p.has(P::kTime));
}

TEST_CASE("Megatron validation lines and other 'iteration' lines are not steps") {
  CHECK(read({" validation loss at iteration 100 on validation set | lm loss value: "
              "2.310000E+00 | lm loss PPL: 1.007425E+01 | ",
              "saving checkpoint at iteration     100 to /ckpt",
              "Rank 3, node x, device 3, iteration #3: Possible transient error!"})
            .empty());
}

TEST_CASE("Megatron validation lines are the series' validation losses") {
  const auto series = read(
      {" [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | "
       "elapsed time per iteration (ms): 5361.6 | lm loss: 1.818812E+00 | loss scale: 1.0 | "
       "grad norm: 1.300 | number of skipped iterations:   0 | number of nan iterations:   0 |",
       " validation loss at iteration 71 | lm loss value: 1.902000E+00 | lm loss PPL: "
       "6.699000E+00 | ",
       " validation loss at iteration 71 on validation set | lm loss value: 1.905000E+00 | lm "
       "loss PPL: 6.719000E+00 | ",
       " validation loss at iteration 71 on test set | lm loss value: 1.990000E+00 | lm loss PPL: "
       "7.315000E+00 | "});
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].points().size() == 1);
  const auto& v = series[0].validation();
  REQUIRE(v.size() == 2);  // the test set's line is not the validation series
  CHECK(v[0].step == 71);
  CHECK(v[0].line == 2);
  CHECK(v[0].loss == doctest::Approx(1.902));
  CHECK(v[1].loss == doctest::Approx(1.905));
}

TEST_CASE("DeepSpeed step line (deepspeedai/DeepSpeed#1825): cumulative skipped, [Rank N]") {
  const auto series = read(
      {"[2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=40, skipped=2, "
       "lr=[5e-05], mom=[[0.9, 0.999]]",
       "[2022-03-11 02:07:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=50, skipped=5, "
       "lr=[5e-05], mom=[(0.9, 0.999), (0.9, 0.999)]"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "deepspeed");
  CHECK(series[0].rank == 0);
  CHECK_FALSE(series[0].rank_is_local);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 2);
  CHECK(p[0].step == 40);
  CHECK(p[0].learning_rate == doctest::Approx(5e-05));
  CHECK(p[0].skipped == 2);
  CHECK(p[1].skipped == 3);
  CHECK(p[0].time == doctest::Approx(unix_seconds(2022, 3, 11, 2, 6, 58.985)));
}

// ---- DeepSpeed's fp16 loss scaler (training-logs.md §2) ----------------------------------------

// The deepspeed series among `series`: overflow lines make one of their own.
const Series& deepspeed_series(const std::vector<Series>& series) {
  const auto it = std::find_if(series.begin(), series.end(),
                               [](const Series& s) { return s.format == "deepspeed"; });
  REQUIRE(it != series.end());
  return *it;
}

TEST_CASE(
    "DeepSpeed overflow lines glued to the HF Trainer's bar (ymcui/Chinese-LLaMA-Alpaca#534)") {
  const auto series = read(
      {" 14%|█▍        | 378/2724 [13:58:09<86:18:35, 132.44s/it][2023-06-07 22:16:00,018] [INFO] "
       "[loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
       "loss scale: 64, reducing to 32",
       " 14%|█▍        | 379/2724 [14:00:21<86:09:52, 132.28s/it][2023-06-07 22:18:11,762] [INFO] "
       "[loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
       "loss scale: 32, reducing to 16",
       " 14%|█▍        | 380/2724 [14:02:33<86:01:24, 132.12s/it]",
       "{'loss': 2.0491, 'learning_rate': 0.0001961913563176343, 'epoch': 0.28}",
       " 14%|█▍        | 380/2724 [14:02:33<86:01:24, 132.12s/it][2023-06-07 22:20:23,340] [INFO] "
       "[loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted "
       "loss scale: 16, reducing to 8"});
  REQUIRE(series.size() == 2);  // and the HF Trainer's dict
  const Series& overflows = deepspeed_series(series);
  CHECK(overflows.rank == 0);
  const auto& p = overflows.points();
  REQUIRE(p.size() == 3);
  // The bar counts the steps done; the overflow is in the next one.
  CHECK(p[0].step == 379);
  CHECK(p[1].step == 380);
  CHECK(p[2].step == 381);
  for (const P& point : p) CHECK(point.skipped == 1);
  CHECK(p[0].loss_scale == 32);
  CHECK(p[2].loss_scale == 8);
  CHECK(p[0].line == 1);
  CHECK(p[0].time == doctest::Approx(unix_seconds(2023, 6, 7, 22, 16, 0.018)));
}

TEST_CASE("DeepSpeed overflow lines without a bar are numbered in order (zai-org/CogVideo#233)") {
  const auto series = read(
      {"[2024-09-11 17:52:18,030] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648",
       "[2024-09-11 17:52:32,563] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 2147483648, reducing to 1073741824"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "deepspeed");
  const auto& p = series[0].points();
  REQUIRE(p.size() == 2);
  CHECK(p[0].step == 1);
  CHECK(p[1].step == 2);
  CHECK(p[0].loss_scale == doctest::Approx(2147483648.0));
  CHECK(p[1].skipped == 1);
}

// Issue 38: Apex AMP's scaler names the overflow in words of its own (NVIDIA/apex#834).
TEST_CASE("issue 38: Apex AMP's gradient overflow is a skipped step at the reduced scale") {
  const auto series =
      read({"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 2);
  CHECK(p[0].skipped == 1);
  CHECK(p[1].loss_scale == 16384);
  CHECK(read({"Gradient overflow detected in layer 3"}).empty());
}

TEST_CASE("DeepSpeed overflow: the older [deepscale] floats (huggingface/transformers#9996)") {
  const P p = only_point(
      {"  1%|▉    …    | 6/1184 [00:21<1:09:10,  3.52s/it][2021-02-04 15:06:19,825] [INFO] "
       "[stage2.py:1357:step] [deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: "
       "134217728.0, reducing to 67108864.0"});
  CHECK(p.step == 7);
  CHECK(p.skipped == 1);
  CHECK(p.loss_scale == doctest::Approx(67108864.0));
}

TEST_CASE("DeepSpeed overflow: hysteresis keeps the scale, bf16 prints none (loss_scaler.py)") {
  // The shapes loss_scaler.py's update_scale prints (training-logs.md §2), stamped as DeepSpeed's
  // logger stamps them.
  P p = only_point(
      {"[2023-04-28 06:51:30,648] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing "
       "hysteresis to 1"});
  CHECK(p.skipped == 1);
  CHECK(p.loss_scale == 65536);
  p = only_point(
      {"[2023-04-28 06:51:30,648] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step."});
  CHECK(p.skipped == 1);
  CHECK_FALSE(p.has(P::kLossScale));
}

TEST_CASE("DeepSpeed overflow at a scale grown back is not part of the run before it") {
  // deepspeedai/DeepSpeed#931's line, and the same overflow again after the scaler doubled the
  // scale back (a window of clean steps later).
  const auto series = read(
      {"[2023-04-28 06:51:30,648] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
       "[2023-04-28 07:51:30,648] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 3);
  CHECK(p[1].skipped == 0);
  CHECK(p[1].loss_scale == 65536);
  CHECK(p[1].step < p[2].step);
  CHECK(p[2].skipped == 1);
}

TEST_CASE("DeepSpeed step lines and overflow lines count each skipped step once") {
  const auto series = read(
      {"[2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=40, skipped=2, "
       "lr=[5e-05], mom=[[0.9, 0.999]]",
       "[2022-03-11 02:07:01,000] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 64, reducing to 32",
       "[2022-03-11 02:07:07,000] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 32, reducing to 16",
       "[2022-03-11 02:07:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=50, skipped=5, "
       "lr=[5e-05], mom=[[0.9, 0.999]]",
       "[2022-03-11 02:08:01,000] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! "
       "Rank 0 Skipping step. Attempted loss scale: 16, reducing to 8",
       "[2022-03-11 02:08:07,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=51, skipped=6, "
       "lr=[5e-05], mom=[[0.9, 0.999]]"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 5);
  CHECK(p[0].step == 40);
  CHECK(p[1].step == 41);
  CHECK(p[2].step == 42);
  CHECK(p[3].step == 50);
  CHECK(p[3].skipped == 1);  // 3 since step 40, 2 of them reported by overflow lines
  // The overflow numbered 51 is step 51's: one point, one skipped step.
  CHECK(p[4].step == 51);
  CHECK(p[4].skipped == 1);
  CHECK(p[4].loss_scale == 8);
  uint64_t skipped = 0;
  for (const P& point : p) skipped += point.skipped;
  CHECK(skipped == 6);
}

TEST_CASE("HF Trainer dicts (AnswerDotAI/ModernBERT#233): numbered in order, nan kept") {
  const auto series = read(
      {"{'loss': 0.2051, 'grad_norm': nan, 'learning_rate': 9.774074342405685e-06, 'epoch': "
       "0.53}",
       "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 9.773696745450087e-06, 'epoch': 0.53}",
       "{'eval_loss': 0.31, 'eval_runtime': 12.3, 'eval_samples_per_second': 81.2, "
       "'eval_steps_per_second': 2.1, 'epoch': 0.53}",
       "{'train_runtime': 116.1914, 'train_samples_per_second': 6.885, "
       "'train_steps_per_second': 1.721, 'train_loss': 2.819730052947998, 'epoch': 0.15}"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "hf-trainer");
  const auto& p = series[0].points();
  REQUIRE(p.size() == 2);
  CHECK(p[0].step == 1);
  CHECK(p[1].step == 2);
  CHECK(p[0].loss == doctest::Approx(0.2051));
  CHECK(p[0].grad_norm_nonfinite());
  CHECK(p[1].loss == 0.0f);
  CHECK(p[1].learning_rate == doctest::Approx(9.773696745450087e-06));
  // The evaluation dict is a validation loss after the latest logged point.
  REQUIRE(series[0].validation().size() == 1);
  CHECK(series[0].validation()[0].step == 2);
  CHECK(series[0].validation()[0].loss == doctest::Approx(0.31));
}

TEST_CASE("HF Trainer dicts with quoted values (v5-era ProgressCallback)") {
  const P p =
      only_point({"{'loss': '1.764', 'grad_norm': '2.609', 'learning_rate': '6.667e-05', "
                  "'epoch': '3'}"});
  CHECK(p.loss == doctest::Approx(1.764));
  CHECK(p.grad_norm == doctest::Approx(2.609));
  CHECK(p.learning_rate == doctest::Approx(6.667e-05));
}

TEST_CASE("Lightning 1.x progress bar (official-stockfish/nnue-pytorch#83)") {
  const auto series =
      read({"Epoch 1:  39%|█████████▍              | 4846/12331 [05:59<09:15, 13.47it/s, "
            "loss=0.0136, v_num=1]"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "lightning");
  const P& p = series[0].points()[0];
  CHECK(p.step == 12331 + 4846);  // batches of the epochs before, then this one's
  CHECK(p.loss == doctest::Approx(0.0136));
  CHECK(p.iteration_seconds == doctest::Approx(1 / 13.47));
}

TEST_CASE("NeMo 1.x progress bar (NVIDIA/NeMo-Framework-Launcher#55): global_step, s/it") {
  const P p = only_point(
      {"Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=, "
       "reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]"});
  CHECK(p.step == 794);
  CHECK(p.loss == doctest::Approx(3.09));  // the step's own loss, not the running mean
  CHECK(p.iteration_seconds == doctest::Approx(41.36));
}

TEST_CASE("tqdm frames separated by \\r: each is read, a redrawn step is one point") {
  const auto series =
      read({"Epoch 0:  10%|█         | 1/10 [00:01<00:09,  1.00it/s, loss=2.5, v_num=0]\r"
            "Epoch 0:  10%|█         | 1/10 [00:01<00:09,  1.00it/s, loss=2.4, v_num=0]\r"
            "Epoch 0:  20%|██        | 2/10 [00:02<00:08,  1.00it/s, loss=2.3, v_num=0]"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 2);
  CHECK(p[0].loss == doctest::Approx(2.4));
  CHECK(p[1].loss == doctest::Approx(2.3));
}

TEST_CASE("torchtitan step line (pytorch/torchtitan#3393): tee header is the local rank") {
  const auto series =
      read({"[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  "
            "grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%",
            "[rank0]:[titan] 2026-05-18 16:05:46,338 - root - INFO - validate step: 15  loss:  "
            "3.1000  memory:  9.46GiB(64.99%)  tps: 7,282"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "torchtitan");
  CHECK(series[0].rank == 0);
  CHECK(series[0].rank_is_local);
  REQUIRE(series[0].points().size() == 1);
  const P& p = series[0].points()[0];
  CHECK(p.step == 14);
  CHECK(p.loss == doctest::Approx(3.24405));
  CHECK(p.grad_norm == doctest::Approx(0.8319));
  CHECK(p.throughput == 7282.0f);
  CHECK(p.time == doctest::Approx(unix_seconds(2026, 5, 18, 16, 4, 46.338)));
}

TEST_CASE("torchtitan with its default colours and a NaN loss") {
  const P p = only_point(
      {"[titan] 2026-05-18 16:04:46,338 - root - INFO - \x1b[31mstep:  2  \x1b[32mloss:      "
       "nan  \x1b[38;2;180;60;0mgrad_norm:     nan  \x1b[38;2;54;234;195mmemory:  9.46GiB(64.99%)"
       "  \x1b[34mtps: 12,345  \x1b[36mtflops: 0.52  \x1b[35mmfu: 0.17%\x1b[39m"});
  CHECK(p.step == 2);
  CHECK(p.loss_nonfinite());
  CHECK(p.grad_norm_nonfinite());
  CHECK(p.throughput == 12345.0f);
}

TEST_CASE("NeMo 2 progress printer (NVIDIA-BioNeMo/bionemo-recipes#740)") {
  const auto series =
      read({"Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | "
            "global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 | "
            "train_step_timing in s: 0.03146 | val_loss: 4.106",
            "Validation: iteration 5/10"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "nemo");
  REQUIRE(series[0].points().size() == 1);
  const P& p = series[0].points()[0];
  CHECK(p.step == 120);
  CHECK(p.loss == doctest::Approx(1.233));
  CHECK(p.learning_rate == doctest::Approx(3e-05));
  CHECK(p.iteration_seconds == doctest::Approx(0.03146));
}

TEST_CASE("mmengine (open-mmlab/mmdetection#11893): Epoch(train) [E][n/N], loss nan") {
  const auto series =
      read({"08/03 22:09:24 - mmengine - INFO - Epoch(train)  [1][ 500/2931]  lr: 2.0000e-02  eta: "
            "0:39:15  time: 0.0578  data_time: 0.0017  memory: 2389  loss: nan  loss_rpn_cls: nan  "
            "loss_rpn_bbox: nan  loss_cls: nan  acc: 0.0000  loss_bbox: nan"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "mmengine");
  const P& p = series[0].points()[0];
  CHECK(p.step == 500);
  CHECK(p.loss_nonfinite());
  CHECK(p.learning_rate == doctest::Approx(0.02));
  CHECK(p.iteration_seconds == doctest::Approx(0.0578));
  // The second epoch counts on from the first; by iteration, the counter is the step.
  CHECK(only_point({"Epoch(train)   [2][100/270]  lr: 1.0000e-03  eta: 0:10:01  time: 0.4012  "
                    "data_time: 0.0101  memory: 3514  grad_norm: nan  loss: 0.8153"})
            .step == 370);
  const P iter = only_point(
      {"Iter(train) [ 50/1000]  lr: 1.0000e-04  eta: 0:09:50  time: 0.6000  data_time: 0.0100  "
       "memory: 4096  grad_norm: nan  loss: 2.1034"});
  CHECK(iter.step == 50);
  CHECK(iter.grad_norm_nonfinite());
  // Validation and test lines are not steps.
  CHECK(read({"Epoch(val)  [1][100/500]    eta: 0:00:10  time: 0.0500  data_time: 0.0010  "
              "memory: 1024  val/loss: 0.5120"})
            .empty());
}

TEST_CASE("mmcv TextLoggerHook (OpenDriveLab/Birds-eye-view-Perception#13): grad_norm nan") {
  const auto series =
      read({"2022-12-05 16:28:38,593 - mmdet - INFO - Epoch [12][700/3953]\tlr: 3.604e-06, eta: "
            "3:08:55, time: 3.157, data_time: 0.852, memory: 19582, loss_cls: 0.2271, loss_bbox: "
            "0.4775, d0.loss_cls: 0.2535, d0.loss_bbox: 0.5138, d1.loss_cls: 0.2498, d1.loss_bbox: "
            "0.4906, d2.loss_cls: 0.2389, d2.loss_bbox: 0.4845, d3.loss_cls: 0.2293, d3.loss_bbox: "
            "0.4818, d4.loss_cls: 0.2278, d4.loss_bbox: 0.4785, loss: 4.3531, grad_norm: nan"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "mmcv");
  const P& p = series[0].points()[0];
  CHECK(p.step == 11 * 3953 + 700);
  CHECK(p.loss == doctest::Approx(4.3531));
  CHECK(p.grad_norm_nonfinite());
  CHECK(p.iteration_seconds == doctest::Approx(3.157));
  REQUIRE(p.has(P::kTime));
  CHECK(p.time == doctest::Approx(unix_seconds(2022, 12, 5, 16, 28, 38) + 0.593));
}

TEST_CASE("detectron2 CommonMetricPrinter (facebookresearch/d2go#524): total_loss") {
  const auto series =
      read({"[04/05 01:30:24 d2.utils.events]:  eta: 0:03:35  iter: 19  total_loss: 1.36  "
            "loss_cls: 0.6522  loss_box_reg: 0.5817  loss_rpn_cls: 0.07138  loss_rpn_loc: "
            "0.003773  time: 0.3636  data_time: 0.1102  lr: 3.8077e-06  max_mem: 433M",
            // The same format string ({:.4g} of a NaN median).
            "[04/05 01:30:31 d2.utils.events]:  eta: 0:03:14  iter: 39  total_loss: nan  "
            "loss_cls: nan  loss_box_reg: 0.637  loss_rpn_cls: 0.0653  loss_rpn_loc: 0.00412  "
            "time: 0.3633  data_time: 0.0641  lr: 7.5527e-06  max_mem: 433M"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "detectron2");
  REQUIRE(series[0].points().size() == 2);
  const P& p = series[0].points()[0];
  CHECK(p.step == 19);
  CHECK(p.loss == doctest::Approx(1.36));  // total_loss, not loss_cls
  CHECK(p.iteration_seconds == doctest::Approx(0.3636));
  CHECK(p.learning_rate == doctest::Approx(3.8077e-06));
  CHECK(series[0].points()[1].loss_nonfinite());
}

TEST_CASE("maskrcnn-benchmark MetricLogger: median (global average)") {
  // facebookresearch/maskrcnn-benchmark#825.
  const auto series = read(
      {"2019-05-27 10:48:54,461 maskrcnn_benchmark.trainer INFO: eta: 0:17:37  iter: 87940  "
       "loss: 0.6097 (0.9191)  loss_classifier: 0.1472 (0.3151)  loss_box_reg: 0.0702 (0.1441)  "
       "loss_mask: 0.2618 (0.3238)  loss_objectness: 0.0190 (0.0683)  loss_rpn_box_reg: 0.0148 "
       "(0.0678)  time: 0.5063 (0.5132)  data: 0.0062 (0.0078)  lr: 0.000025  max mem: 4358"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "maskrcnn-benchmark");
  const P& p = series[0].points()[0];
  CHECK(p.step == 87940);
  CHECK(p.loss == doctest::Approx(0.6097));
  CHECK(p.iteration_seconds == doctest::Approx(0.5063));
  // microsoft/scene_graph_benchmark#95.
  const P nan = only_point(
      {"INFO:maskrcnn_benchmark.trainer:eta: 10:55:48  iter: 5100  loss: nan (nan)  "
       "loss_obj_classifier: 0.0000 (0.0000)  loss_pred_classifier: nan (nan)  time: 1.1246 "
       "(1.1275)  data: 0.0462 (0.0644)  lr: 0.000467  max mem: 9431"});
  CHECK(nan.step == 5100);
  CHECK(nan.loss_nonfinite());
}

TEST_CASE("nanoGPT (karpathy/nanoGPT#110, #215): iter lines; the eval line is no step") {
  const P p = only_point({"iter 1631: loss 4.0863, time 561.94ms"});
  CHECK(p.step == 1631);
  CHECK(p.loss == doctest::Approx(4.0863));
  CHECK(p.iteration_seconds == doctest::Approx(0.56194));
  const auto series =
      read({"2023-03-22 09:32:32 step 3000: train loss 4.0390, val loss 4.0427",
            "2023-03-22 09:32:41 iter 3000: loss 4.2490, time 35392.33ms, mfu 13.85%",
            "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "nanogpt");
  REQUIRE(series[0].points().size() == 2);
  CHECK(series[0].points()[0].step == 3000);
  CHECK(series[0].points()[0].loss == doctest::Approx(4.249));
  CHECK(series[0].points()[1].loss_nonfinite());
  CHECK(series[0].points()[1].time == unix_seconds(2023, 3, 22, 9, 32, 52));
  // The eval line came before any iter line: nothing to belong to yet.
  CHECK(series[0].validation().empty());
  const auto later = read({"iter 3000: loss 4.2490, time 35392.33ms, mfu 13.85%",
                           "step 3250: train loss 4.0390, val loss 4.0427"});
  REQUIRE(later.size() == 1);
  REQUIRE(later[0].validation().size() == 1);
  CHECK(later[0].validation()[0].step == 3250);
  CHECK(later[0].validation()[0].loss == doctest::Approx(4.0427));
}

TEST_CASE("nanotron log entries (huggingface/nanotron#390): human-format numbers") {
  const auto series = read(
      {"10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | "
       "consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | "
       "tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.38 | lr: 1e-05 | "
       "model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.25",
       // human_format prints a NaN as "nan".
       "10/17/2025 16:32:07 [INFO|DP=0|PP=0|TP=0]: iteration: 327282 / 378950 | "
       "consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | "
       "tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: nan | lr: 1e-05 | "
       "model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: nan"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "nanotron");
  REQUIRE(series[0].points().size() == 2);
  const P& p = series[0].points()[0];
  CHECK(p.step == 327281);
  CHECK(p.loss == doctest::Approx(2.38));
  CHECK(p.grad_norm == doctest::Approx(1.25));
  CHECK(p.iteration_seconds == doctest::Approx(11.5));
  CHECK(p.throughput == doctest::Approx(11400));
  CHECK(series[0].points()[1].loss_nonfinite());
  CHECK(series[0].points()[1].grad_norm_nonfinite());
}

TEST_CASE("fairseq simple and JSON progress (facebookresearch/fairseq#2338, #301)") {
  const P p = only_point(
      {"2020-07-17 07:11:02 | INFO | train_inner | epoch 001:   2800 / 160368 loss=9.255, "
       "ppl=611.12, wps=57.3, ups=0.04, wpb=1613, bsz=80, num_updates=2800, lr=2.8e-05, "
       "gnorm=3.23, train_wall=13, wall=1236"});
  CHECK(p.step == 2800);
  CHECK(p.loss == doctest::Approx(9.255));
  CHECK(p.grad_norm == doctest::Approx(3.23));
  CHECK(p.learning_rate == doctest::Approx(2.8e-05));
  CHECK(p.time == unix_seconds(2020, 7, 17, 7, 11, 2));
  // 2018: no num_updates; the epoch and the bar number the step.
  const auto old =
      read({"| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32, "
            "lr=0.001, clip=100%, gnorm=2.1427"});
  REQUIRE(old.size() == 1);
  CHECK(old[0].format == "fairseq");
  CHECK(old[0].points()[0].step == 9 * 8223 + 2000);
  CHECK(old[0].points()[0].loss == doctest::Approx(1.27));
  // The format strings with a NaN average; JsonProgressBar quotes the formatted stats.
  const P nan = only_point(
      {"2020-07-17 07:11:31 | INFO | train_inner | epoch 001:   2900 / 160368 loss=nan, "
       "ppl=nan, wps=53.5, ups=0.04, wpb=1504, bsz=64, num_updates=2900, lr=2.9e-05, gnorm=nan, "
       "train_wall=13, wall=1265"});
  CHECK(nan.loss_nonfinite());
  CHECK(nan.grad_norm_nonfinite());
  const P json = only_point(
      {"2020-07-17 07:11:02 | INFO | train_inner | {\"epoch\": 1, \"update\": 0.017, \"loss\": "
       "\"nan\", \"ppl\": \"nan\", \"wps\": \"57.3\", \"ups\": \"0.04\", \"wpb\": \"1613\", "
       "\"bsz\": \"80\", \"num_updates\": \"2800\", \"lr\": \"2.8e-05\", \"gnorm\": \"3.23\", "
       "\"train_wall\": \"13\", \"wall\": \"1236\"}"});
  CHECK(json.step == 2800);
  CHECK(json.loss_nonfinite());
  // End-of-epoch summaries and validation (fairseq#514, #301) are not steps.
  CHECK(read({"| epoch 008 | loss 6.326 | nll_loss 5.193 | ppl 36.58 | wps 12876 | ups 4.9 | "
              "wpb 2578 | bsz 108 | num_updates 21896 | lr 0.000213706 | gnorm 1.201 | clip 0% "
              "| oom 0 | wall 4634 | train_wall 4309",
              "| epoch 008 | valid on 'valid' subset | valid_loss 6.43844 | valid_nll_loss "
              "5.23288 | valid_ppl 37.61 | num_updates 21896 | best 6.43844",
              "| epoch 010 | valid on 'valid' subset  1000 / 1311 loss=1.60"})
            .empty());
}

TEST_CASE("Keras progress lines (divamgupta/image-segmentation-keras#50, keras#10506)") {
  const auto series =
      read({"423/423 [==============================] - 192s 454ms/step - loss: 1.8386 - "
            "mean_squared_error: 0.0049 - acc: 0.6136",
            "512/512 [==============================] - 127s 247ms/step - loss: nan - acc: nan - "
            "val_loss: nan - val_acc: nan"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "keras");
  REQUIRE(series[0].points().size() == 2);
  CHECK(series[0].points()[0].loss == doctest::Approx(1.8386));
  CHECK(series[0].points()[1].loss_nonfinite());
  CHECK(series[0].points()[1].step == series[0].points()[0].step + 1);
  // Keras 2 ETA lines (Neerajj9/CSRNet-keras#9) and Keras 3's coloured bar (progbar.py).
  CHECK(only_point({"  2/100 [..............................] - ETA: 20:11 - loss: nan - mse: "
                    "nan      (405, 540, 3)"})
            .loss_nonfinite());
  CHECK(only_point({"\x1b[1m1875/1875\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m "
                    "\x1b[1m3s\x1b[0m 1ms/step - accuracy: 0.8756 - loss: 0.4330"})
            .loss == doctest::Approx(0.433));
}

TEST_CASE("generic reader: a step-like and a loss-like key on one line, nothing else") {
  CHECK(only_point({"iter=100 loss=2.31"}).step == 100);
  CHECK(only_point({"iteration: 7, total_loss: nan"}).loss_nonfinite());
  CHECK(only_point({"step=3 grad_norm=nan"}).grad_norm_nonfinite());
  CHECK(read({"timeout=600", "port: 29500", "MASTER_PORT=29500 timeout=600 step=5",
              "Saving checkpoint at step 500", "loss scale: 1024 at step 3",
              "iteration 5 took 3.2s", "step 3000: train loss 4.0390, val loss 4.0427",
              "iter 12 eval loss 2.5", "epoch 3 val loss 2.5"})
            .empty());
}

// Issue 38 item 4: a NaN is read wherever it is printed, with no step (epfLLM/Megatron-LLM#34).
TEST_CASE("issue 38: a NaN loss or grad norm without a step is still a point") {
  CHECK(only_point({"***WARNING*** Bad grad_norm detected (grad_norm=nan)"}).grad_norm_nonfinite());
  CHECK(read({"grad_norm=1.5", "loss: 2.5"}).empty());
}

// Issue 38 item 4: a loop that logs once per epoch is numbered by it (vpetren/gradnorm_tf#17).
TEST_CASE("issue 38: a whole epoch number stands for the step of a per-epoch loss") {
  const std::vector<Series> series =
      read({"epoch: 3450 loss: 0.21063452526926987", "epoch: 3451 loss: nan", "epoch 3 loss 2.5"});
  REQUIRE(!series.empty());
  CHECK(series[0].points().size() >= 2);
  CHECK(only_point({"epoch: 3451 loss: nan"}).loss_nonfinite());
  CHECK(only_point({"epoch: 3451 loss: nan"}).step == 3451);
  CHECK(read({"epoch: 1.5 loss: 2.5"}).empty());
}

TEST_CASE("generic key=value, key: value and JSON lines") {
  CHECK(only_point({"step=10 loss=2.5"}).loss == 2.5f);
  CHECK(only_point({"step: 10, loss: 2.5, lr: 1e-4"}).learning_rate == doctest::Approx(1e-4));
  CHECK(only_point({"{\"step\": 10, \"loss\": 2.3}"}).step == 10);
  const P json =
      only_point({"{\"epoch\": 1.8, \"grad_norm\": NaN, \"learning_rate\": 9.8e-05, \"loss\": 0.0, "
                  "\"step\": 50}"});
  CHECK(json.step == 50);
  CHECK(json.grad_norm_nonfinite());
  CHECK(read({"{\"step\": 10, \"loss\": 2.3}"})[0].format == "json");
  CHECK(read({"step=10 loss=2.5"})[0].format == "generic");
  CHECK(read({"Saving model checkpoint at step=500", "the loss function is ok"}).empty());
}

TEST_CASE("blanks between a key and its value (TensorFlow, lit-gpt)") {
  // DrSleep/tensorflow-deeplab-lfov#5: "step N <TAB> loss = X, (s sec/step)".
  const P tf = only_point({"step 13000 \t loss = 5.128, (5.495 sec/step)"});
  CHECK(tf.step == 13000);
  CHECK(tf.loss == doctest::Approx(5.128));
  // Lightning-AI/litgpt#291: gradient accumulation repeats the optimizer step; the latest wins.
  const auto litgpt = read({"iter 7 step 1: loss 1.1201, iter time: 1819.72ms (optimizer.step)",
                            "iter 8 step 1: loss nan, iter time: 1957.89ms"});
  REQUIRE(litgpt.size() == 1);
  CHECK(litgpt[0].format == "generic");
  REQUIRE(litgpt[0].points().size() == 1);
  CHECK(litgpt[0].points()[0].step == 1);
  CHECK(std::isnan(litgpt[0].points()[0].loss));
  // A key followed by a word is no value.
  CHECK(read({"step 3 of the loss function", "Skipping step. Attempted loss scale: 64"}).empty());
}

TEST_CASE("numbers in every printed form") {
  CHECK(std::isnan(only_point({"step=1 loss=nan"}).loss));
  CHECK(std::isnan(only_point({"step=1 loss=NaN"}).loss));
  CHECK(only_point({"step=1 loss=inf"}).loss == INFINITY);
  CHECK(only_point({"step=1 loss=-inf"}).loss == -INFINITY);
  CHECK(only_point({"{\"step\": 1, \"loss\": Infinity}"}).loss == INFINITY);
  CHECK(only_point({"step=1 loss=2.3E+00"}).loss == doctest::Approx(2.3));
  CHECK(only_point({"step=1 loss=+1.5e-3"}).loss == doctest::Approx(1.5e-3));
  CHECK(only_point({"{'loss': np.float64(0.85), 'epoch': 1.0}"}).loss == doctest::Approx(0.85));
}

// ---- Ranks, restarts, memory -------------------------------------------------------------------

TEST_CASE("interleaved [rank0]/[rank1] lines make one series per rank") {
  const auto series =
      read({"[rank0]:step=1 loss=2.0", "[rank1]:step=1 loss=3.0", "[rank0]:step=2 loss=1.9",
            "[rank1]:step=2 loss=2.9", "[rank1]:step=3 loss=2.8"});
  REQUIRE(series.size() == 2);
  CHECK(series[0].rank == 0);
  CHECK(series[1].rank == 1);
  CHECK(series[0].points().size() == 2);
  CHECK(series[1].points().size() == 3);
  CHECK(series[1].points()[2].loss == doctest::Approx(2.8));
  CHECK(series[1].points()[2].line == 5);
  CHECK(series[0].host == "node-1");
}

TEST_CASE("lines without a tag take the rank the path names") {
  const auto series = read({"step=1 loss=2.0"}, "logs/attempt_0/5/stdout.log");
  REQUIRE(series.size() == 1);
  CHECK(series[0].rank == 5);
  CHECK(series[0].rank_is_local);
  CHECK(series[0].path == "logs/attempt_0/5/stdout.log");
}

TEST_CASE("a step counter going back starts a resumed segment") {
  const auto series =
      read({"step=1 loss=3", "step=2 loss=2.9", "step=3 loss=2.8", "step=2 loss=2.9"});
  REQUIRE(series.size() == 2);
  CHECK(series[0].segment == 0);
  CHECK_FALSE(series[0].resumed);
  CHECK(series[0].points().size() == 3);
  CHECK(series[1].segment == 1);
  CHECK(series[1].resumed);
  CHECK(series[1].points()[0].step == 2);
}

TEST_CASE("Megatron's checkpoint-load banner marks a resume, even before the first point") {
  const std::string line =
      " iteration     5610/   20000 | consumed samples:      2872320 | lm loss: 2.411212E+00 |";
  const auto first =
      read({"  successfully loaded checkpoint from /ckpt [ t 0, p 0 ] at "
            "iteration 5600",
            line});
  REQUIRE(first.size() == 1);
  CHECK(first[0].resumed);
  const auto second = read({line, "  successfully loaded checkpoint from /ckpt at iteration 5610",
                            " iteration     5620/   20000 | lm loss: 2.401212E+00 |"});
  REQUIRE(second.size() == 2);
  CHECK(second[1].resumed);
  CHECK(second[1].points()[0].step == 5620);
}

TEST_CASE("HF Trainer: a new run banner or the epoch going back starts a new segment") {
  const auto series = read({"{'loss': 2.0, 'epoch': 0.1}", "{'loss': 1.9, 'epoch': 0.2}",
                            "***** Running training *****", "{'loss': 2.5, 'epoch': 0.01}",
                            "{'loss': 2.4, 'epoch': 0.02}", "{'loss': 2.6, 'epoch': 0.01}"});
  REQUIRE(series.size() == 3);
  CHECK_FALSE(series[1].resumed);
  CHECK(series[2].resumed);
}

TEST_CASE("the latest time of the input is kept for the series") {
  const auto series =
      read({"[2024-06-11 13:46:00] step=1 loss=2.0", "[2024-06-11 13:47:00] step=2 loss=1.9",
            "[2024-06-11 14:30:00] NCCL watchdog timeout"});
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].input_end_time);
  CHECK(*series[0].input_end_time == unix_seconds(2024, 6, 11, 14, 30, 0));
}

TEST_CASE("decimation keeps a planted spike and a NaN, and bounds the points") {
  Series series;
  series.Limit(64);
  for (int i = 1; i <= 10'000; ++i) {
    MetricPoint p;
    p.step = i;
    p.loss = i == 7'777 ? 50.0f : 2.0f;
    p.set(P::kLoss);
    if (i == 3'001) {
      p.grad_norm = NAN;
      p.set(P::kGradNorm);
    }
    p.skipped = i % 1000 == 0 ? 1 : 0;
    p.set(P::kSkipped);
    series.Add(p);
  }
  CHECK(series.points().size() <= 64);
  CHECK(series.logged_points() == 10'000);
  uint64_t skipped = 0;
  bool spike = false;
  bool nan = false;
  for (const P& p : series.points()) {
    skipped += p.skipped;
    spike |= p.step == 7'777 && p.loss == 50.0f;
    nan |= p.step == 3'001 && p.grad_norm_nonfinite();
  }
  CHECK(spike);
  CHECK(nan);
  CHECK(skipped == 10);
}

TEST_CASE("a long run stays within kMaxPointsPerSeries") {
  MetricsReader reader("train.log", "");
  for (int i = 1; i <= 250'000; ++i) {
    reader.Feed("step=" + std::to_string(i) + " loss=" + (i == 123'457 ? "9.5" : "2.0"),
                static_cast<uint64_t>(i));
  }
  const auto series = reader.Finish();
  REQUIRE(series.size() == 1);
  CHECK(series[0].points().size() <= kMaxPointsPerSeries);
  CHECK(series[0].logged_points() == 250'000);
  CHECK(std::any_of(series[0].points().begin(), series[0].points().end(),
                    [](const P& p) { return p.step == 123'457 && p.loss == 9.5f; }));
}

TEST_CASE("only the last segment knows how long the log went on") {
  const auto series =
      read({"[2024-06-11 13:46:00] step=5 loss=2.0", "[2024-06-11 13:47:00] step=1 loss=2.1",
            "[2024-06-11 14:30:00] NCCL watchdog timeout"});
  REQUIRE(series.size() == 2);
  CHECK_FALSE(series[0].input_end_time);
  CHECK(series[1].input_end_time);
}

TEST_CASE("series share a point budget and never grow back") {
  std::vector<Series> series(4);
  for (Series& one : series) {
    for (int i = 1; i <= 5'000; ++i) {
      MetricPoint p;
      p.step = i;
      p.loss = 2;
      p.set(P::kLoss);
      one.Add(p);
    }
  }
  share_points(&series, 8'000, 16);
  for (const Series& one : series) {
    CHECK(one.capacity() == 2'000);
    CHECK(one.points().size() <= 2'000);
    CHECK(one.logged_points() == 5'000);
  }
  share_points(&series, 800'000);
  CHECK(series[0].capacity() == 2'000);
  share_points(&series, 40, 16);
  CHECK(series[0].capacity() == 16);
}

TEST_CASE("fairseq's overflow lines are skipped updates at a falling scale (fairseq#512)") {
  const auto series =
      read({"| WARNING: overflow detected, setting loss scale to: 0.25",
            "| WARNING: overflow detected, setting loss scale to: 0.125",
            "2020-07-17 07:11:02 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss "
            "scale to: 64.0"});
  REQUIRE(series.size() == 1);
  CHECK(series[0].format == "fairseq");
  const auto& p = series[0].points();
  REQUIRE(p.size() == 3);
  for (const P& point : p) CHECK(point.skipped == 1);
  CHECK(p[0].loss_scale == 0.25f);
  CHECK(p[1].loss_scale == 0.125f);
  CHECK(p[2].loss_scale == 64.0f);
}

TEST_CASE("a Megatron record wrapped over lines keeps its NaN grad norm (Megatron-Bridge#5306)") {
  const auto series = read({"iteration 5/50 | elapsed time per iteration: 21392.5 ms |",
                            "learning rate: 1.350000E-04 | global batch size: 4096 |",
                            "loss scale: 1.0 | grad norm: nan |",
                            "number of skipped iterations: 0 | number of nan iterations: 0"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(!p.empty());
  CHECK(p.back().grad_norm_nonfinite());
  // A wrapped line of finite values is no point.
  CHECK(read({"loss scale: 1.0 | grad norm: 0.52 |"}).empty());
}

TEST_CASE("metric names in any case: a custom loop's 'Step' and 'Loss' (mpII-face-gaze#3)") {
  const auto series =
      read({"[2019/06/24 16:19:46 __main__ INFO] - Epoch 1 Step 0/1500 Loss 48.9613 (48.9613) "
            "AngleError 27.60 (27.60)",
            "[2019/06/24 16:19:53 __main__ INFO] - Epoch 1 Step 100/1500 Loss nan (nan) "
            "AngleError nan (nan)"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 2);
  CHECK(p[0].step == 0);
  CHECK(p[0].loss == doctest::Approx(48.9613));
  CHECK(p[1].step == 100);
  CHECK(p[1].loss_nonfinite());
}

TEST_CASE("a tqdm bar with losses in its description numbers the overflows after it (trlx#319)") {
  const auto series = read(
      {"[losses/total_loss: 0.22 | losses/policy_loss: 0.13 | losses/value_loss: 0.42]:   2%|  | "
       "76/3200 [14:53<7:36:46,  8.77s/it]",
       "[2023-02-21 22:13:43,188] [INFO] [stage_1_and_2.py:1762:step] [deepspeed] OVERFLOW! Rank 0 "
       "Skipping step. Attempted loss sc",
       "ale: 2048.0, reducing to 1024.0",
       "[losses/total_loss: 0.80 | losses/policy_loss: 0.73 | losses/value_loss: 0.34]:   2%|  | "
       "77/3200 [14:54<5:44:06,  6.61s/it]"});
  REQUIRE(series.size() == 2);
  const Series& bar = series[0].format == "tqdm" ? series[0] : series[1];
  const Series& overflows = series[0].format == "tqdm" ? series[1] : series[0];
  REQUIRE(bar.points().size() == 2);
  CHECK(bar.points()[0].step == 76);
  CHECK(bar.points()[0].loss == doctest::Approx(0.22));
  REQUIRE(overflows.points().size() == 1);
  CHECK(overflows.points()[0].step == 77);
  CHECK(overflows.points()[0].skipped == 1);
}

// Issue 38, item 4: a loss is known by its name's words, in any trainer's line: a prefix or a
// component ("avr_loss", "loss_bbox_reg", "poly_loss"), not a scale or an evaluation.
TEST_CASE("issue 38: loss-like names, key-value tables, bracketed keys and tensors") {
  // kohya-ss/sd-scripts#2137: tqdm's postfix names the loss "avr_loss".
  CHECK(only_point({"steps:   1%|▋        | 41/3280 [00:50<1:06:54,  1.24s/it, avr_loss=nan]"})
            .loss_nonfinite());
  // openai/guided-diffusion#50: the logger's key-value table, one row a line.
  CHECK(only_point({"| lg_loss_scale | -1.62e+04 |", "| loss          | nan       |"})
            .loss_nonfinite());
  // nv-tlabs/LION#9: a bracketed key.
  CHECK(only_point({"2023-01-25 00:21:34.569 | INFO     | trainers.base_trainer:train_epochs:256 - "
                    "[R0] | E6 iter[ 14/ 15] | [Loss] nan | [step]   104 |"})
            .loss_nonfinite());
  // AdvancedLiterateMachinery#161: a dict of tensors, one component NaN.
  CHECK(only_point({"{'pt_loss': tensor(5.8353, device='cuda:0', grad_fn=<NllLoss2DBackward0>), "
                    "'poly_loss': tensor(nan, device='cuda:0', grad_fn=<NllLoss2DBackward0>)}"})
            .loss_nonfinite());
  // The TF2 Object Detection API's loss dict: quoted keys that are paths of names.
  CHECK(only_point({"I0409 23:03:12.869635 140410452137792 model_lib_v2.py:708] "
                    "{'Loss/classification_loss': nan,"})
            .loss_nonfinite());
  // Neither a loss scale nor a validation loss is the training loss.
  CHECK(read({"step=3 loss_scale=nan", "step=4 val_loss=nan"}).empty());
}

// PaddleDetection#3326, SeanNaren/deepspeech.pytorch#485: "Epoch: [E] [n/N]" numbers the points;
// the line's main loss is the named "loss", a component's finite value does not replace it.
TEST_CASE("issue 38: an epoch's batch counter is the step of a generic metric line") {
  const auto series =
      read({"[06/08 16:58:12] ppdet.engine INFO: Epoch: [0] [   0/3308] learning_rate: 0.000025 "
            "loss_rpn_cls: 0.698832 loss: 2.241040 eta: 13:33:58",
            "[06/08 16:58:17] ppdet.engine INFO: Epoch: [0] [  20/3308] learning_rate: 0.000030 "
            "loss_rpn_cls: 0.695908 loss: 8035386370816811357582655488.000000 eta: 3:18:52",
            "Epoch: [1][4686/6051]   Time 1.781 (1.857)      Data 0.005 (0.005)      Loss 42.8735 "
            "(73.3981)"});
  REQUIRE(series.size() == 1);
  const auto& p = series[0].points();
  REQUIRE(p.size() == 3);
  CHECK(p[0].step == 0);
  CHECK(p[0].loss == doctest::Approx(2.24104));
  CHECK(p[1].step == 20);
  CHECK(p[1].loss > 1e27);
  CHECK(p[2].step == 6051 + 4686);  // batch 4686 of 6051 in epoch 1
  CHECK(p[2].loss == doctest::Approx(42.8735));
}
