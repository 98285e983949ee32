// Head-of-line blocking, the reason routers use virtual output queues: a
// 32-port crossbar with one FIFO per input saturates near 2 - sqrt(2) = 58.6%
// of its capacity (Karol, Hluchyj and Morgan, 1987), while the same crossbar
// with a queue per (input, output) pair and iSLIP matching carries nearly all
// of it. Both are fed saturated uniform traffic, one cell per input per slot.
//
//   ./fabric-head-of-line
#include "fabric-crossbar.h"

#include <cmath>
#include <cstdio>

using namespace routertwin;

int
main()
{
    FabricConfig fifo;
    fifo.ports = 32;
    fifo.queueing = FabricQueueing::Fifo;
    fifo.scheduler = FabricScheduler::FifoRandom;
    fifo.inputBufferCells = 64; // saturated inputs need a finite queue

    FabricConfig voq = fifo;
    voq.queueing = FabricQueueing::Voq;
    voq.scheduler = FabricScheduler::Islip;
    voq.islipIterations = 4;

    const UniformRunResult f = RunUniformBernoulli(fifo, 1.0, 2000, 40000);
    const UniformRunResult v = RunUniformBernoulli(voq, 1.0, 2000, 40000);
    std::printf("FIFO inputs:      throughput %.3f +- %.3f per output per slot (2 - sqrt 2 = %.3f)\n",
                f.throughput, f.throughputStdErr, 2.0 - std::sqrt(2.0));
    std::printf("VOQ + 4-iter iSLIP: throughput %.3f +- %.3f\n", v.throughput, v.throughputStdErr);
    return 0;
}
