#include "apps/run/stop_signals.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

namespace cfr {

struct StopSignals::Impl {
  Impl(std::atomic<bool>& s, std::string p, std::string w) : stop(s), program(std::move(p)), what_stays(std::move(w)) {}

  void wait() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;  // cancelled: the program is ending
      if (stop.exchange(true)) {
        std::cerr << "\n" << program << ": second signal: exiting now; " << what_stays << std::endl;
        std::_Exit(128 + sig);
      }
      std::cerr << "\n" << program << ": stopping after the current step (a second signal exits at once)" << std::endl;
      wait();
    });
  }

  std::atomic<bool>& stop;
  std::string program, what_stays;
  boost::asio::io_context io;
  boost::asio::signal_set signals{io, SIGINT, SIGTERM};
  std::thread thread;
};

StopSignals::StopSignals(std::atomic<bool>& stop, std::string program, std::string what_stays)
    : impl_(std::make_unique<Impl>(stop, std::move(program), std::move(what_stays))) {
  impl_->wait();
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

StopSignals::~StopSignals() {
  boost::system::error_code ignored;
  impl_->signals.cancel(ignored);
  impl_->io.stop();
  impl_->thread.join();
}

}  // namespace cfr
