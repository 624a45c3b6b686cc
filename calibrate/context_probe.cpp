// CUDA context size with lazy and with eager module loading, and what a first cuBLAS GEMM adds to it.
//
// cudaMemGetInfo cannot see a process's own context: the context exists before the first call can answer, so
// "before/after cudaFree(0)" measures nothing. Instead:
//   1. for each CUDA_MODULE_LOADING mode (LAZY, EAGER), start kChildren copies of this binary with
//      `--probe-context` and that variable set, one after another, each holding its state open;
//   2. each child creates its context (cudaSetDevice + cudaFree(0)) and reads total - free (device memory in use
//      by everyone, its own context included) = init_k; then allocates the GEMM operands (operands_k bytes),
//      creates a cuBLAS handle, runs one bf16 GEMM and reads again = after_k; it writes
//      "init_k after_k operands_k" to its stdout and waits for its stdin to close;
//   3. context_k = init_k - after_{k-1} (what child k's init added) and
//      with_cublas_k = after_k - operands_k - after_{k-1} (context + cuBLAS handle + kernels, without operands);
//      the profile takes the median over k >= 1. Child 0 is the baseline (it also carries one-off driver state).
// The parent holds no CUDA context meanwhile (the probes run first in main()), so its work cannot move the readings.
// What "a context" holds depends on the binary: EAGER loads every module the process has registered, and this
// binary registers only a few small kernels, so its eager figure is near the lazy one; cuBLAS registers its
// kernels at first use, which the with_cublas figure shows. PyTorch's eager context is far larger (MECHANICS §2).
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks.h"
#include "check.h"
#include "timing.h"

namespace memplan::cal {
namespace {

constexpr int kChildren = 4;

struct Child {
  pid_t pid = -1;
  int to_child = -1;    // closing it releases the child
  int from_child = -1;  // one line: bytes in use after the child's context init
};

[[noreturn]] void sys_fail(const char* what) {
  std::fprintf(stderr, "memplan-calibrate: %s failed: %s (%s)\n", what, std::strerror(errno), __FILE__);
  std::exit(2);
}

Child spawn_child(const std::string& exe, int device, const char* loading_mode) {
  // O_CLOEXEC: a later child must not inherit this child's pipe ends, or closing ours would never give it EOF.
  // dup2 onto 0/1 in the child clears the flag on the copies it keeps.
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) sys_fail("pipe2");
  const pid_t pid = fork();
  if (pid < 0) sys_fail("fork");
  if (pid == 0) {
    dup2(to[0], STDIN_FILENO);
    dup2(from[1], STDOUT_FILENO);
    close(to[0]);
    close(to[1]);
    close(from[0]);
    close(from[1]);
    setenv("CUDA_MODULE_LOADING", loading_mode, 1);
    const std::string dev = std::to_string(device);
    execl(exe.c_str(), exe.c_str(), "--probe-context", "--device", dev.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "memplan-calibrate: exec %s failed: %s\n", exe.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  return Child{pid, to[1], from[0]};
}

struct Reading {
  long long init_used = 0;      // after context creation
  long long after_used = 0;     // after operands, cuBLAS handle and first GEMM as well
  long long operand_bytes = 0;  // what the GEMM operands took (still held)
};

Reading read_reading(const Child& c) {
  std::string line;
  char ch;
  while (true) {
    const ssize_t n = read(c.from_child, &ch, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (ch == '\n') break;
    line += ch;
  }
  Reading r;
  if (std::sscanf(line.c_str(), "%lld %lld %lld", &r.init_used, &r.after_used, &r.operand_bytes) != 3) {
    std::fprintf(stderr, "memplan-calibrate: context probe child %d reported '%s' (%s)\n", c.pid, line.c_str(),
                 __FILE__);
    std::exit(2);
  }
  return r;
}

void release(Child& c) {
  close(c.to_child);
  close(c.from_child);
  int status = 0;
  if (waitpid(c.pid, &status, 0) < 0) sys_fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "memplan-calibrate: context probe child %d failed (status %d)\n", c.pid, status);
    std::exit(2);
  }
}

struct ModeResult {
  long long context_bytes = -1;
  long long with_cublas_bytes = -1;
};

// Fills `detail` with every reading; returns the medians of the per-child differences.
ModeResult probe_mode(const std::string& exe, int device, const char* mode, JsonObject& detail) {
  std::vector<Child> children;
  std::vector<Reading> used;
  for (int i = 0; i < kChildren; ++i) {
    children.push_back(spawn_child(exe, device, mode));
    used.push_back(read_reading(children.back()));
  }
  for (auto& c : children) release(c);
  std::vector<double> ctx, with_cublas;
  std::vector<JsonObject> readings;
  for (int i = 0; i < kChildren; ++i) {
    JsonObject r;
    r.set_int("used_after_init_bytes", used[i].init_used);
    r.set_int("used_after_cublas_gemm_bytes", used[i].after_used);
    r.set_int("gemm_operand_bytes", used[i].operand_bytes);
    if (i > 0) {
      ctx.push_back(static_cast<double>(used[i].init_used - used[i - 1].after_used));
      const long long plus_cublas = used[i].after_used - used[i].operand_bytes - used[i - 1].after_used;
      with_cublas.push_back(static_cast<double>(plus_cublas));
      r.set_int("context_bytes", used[i].init_used - used[i - 1].after_used);
      r.set_int("context_plus_cublas_bytes", plus_cublas);
    }
    readings.push_back(std::move(r));
  }
  ModeResult out{static_cast<long long>(median(ctx)), static_cast<long long>(median(with_cublas))};
  JsonObject m;
  m.set_str("CUDA_MODULE_LOADING", mode);
  m.set_int("context_bytes_median", out.context_bytes);
  m.set_int("context_plus_cublas_bytes_median", out.with_cublas_bytes);
  m.set_arr("children", std::move(readings));
  detail.set_obj(mode, std::move(m));
  return out;
}

}  // namespace

ContextSizes probe_context_sizes(const std::string& self_exe, int device) {
  ContextSizes out;
  out.detail.set_str("method",
                     "children of this binary created contexts one after another while the earlier ones stayed "
                     "open; context = median over k>=1 of (total-free after child k init) - (after child k-1 "
                     "finished); plus_cublas adds child k's cublasCreate + one 1024^3 bf16 GEMM");
  const ModeResult lazy = probe_mode(self_exe, device, "LAZY", out.detail);
  out.lazy_bytes = lazy.context_bytes;
  out.lazy_plus_cublas_bytes = lazy.with_cublas_bytes;
  progress("context (lazy module loading): %.1f MiB, %.1f MiB with cuBLAS + 1 GEMM", lazy.context_bytes / 1048576.0,
           lazy.with_cublas_bytes / 1048576.0);
  const ModeResult eager = probe_mode(self_exe, device, "EAGER", out.detail);
  out.eager_bytes = eager.context_bytes;
  out.eager_plus_cublas_bytes = eager.with_cublas_bytes;
  progress("context (eager module loading): %.1f MiB, %.1f MiB with cuBLAS + 1 GEMM",
           eager.context_bytes / 1048576.0, eager.with_cublas_bytes / 1048576.0);
  return out;
}

int run_context_child(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaFree(nullptr));  // forces context creation
  const long long init_used = device_used_bytes();

  constexpr int n = 1024;
  void *a, *b, *c;
  for (void** p : {&a, &b, &c}) {
    CUDA_CHECK(cudaMalloc(p, 2 * n * n));
    CUDA_CHECK(cudaMemset(*p, 0, 2 * n * n));
  }
  // The GEMM's operands are ours, not the library's: the parent takes them out.
  CUDA_CHECK(cudaDeviceSynchronize());
  const long long operands = device_used_bytes() - init_used;
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  const float alpha = 1.f, beta = 0.f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n,
                            &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CUDA_CHECK(cudaDeviceSynchronize());
  const long long after_used = device_used_bytes();

  std::printf("%lld %lld %lld\n", init_used, after_used, operands);
  std::fflush(stdout);
  char buf[64];
  while (read(STDIN_FILENO, buf, sizeof buf) > 0) {
  }  // hold the context and the handle until the parent closes our stdin
  return 0;
}

}  // namespace memplan::cal
