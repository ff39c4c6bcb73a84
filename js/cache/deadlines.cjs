'use strict';
/*
 * cache/deadlines.cjs - every Redis command of a cache bounded by one
 * `timeout`. Every command has the same timeout, so deadlines come in the
 * order commands were sent, and one timer, armed for the oldest, serves
 * them all: a timer per command would start and stop libuv's timer on
 * every call of the hot path. Answered commands are trimmed from both
 * ends of the queue.
 */

/*
 * createDeadlines(timeout, late() -> the error of a command that did
 * not answer) -> bound(sent, wrap(err), onTime?()): a promise of
 * sent's answer, rejected with wrap(late()) after timeout ms, or with
 * wrap(err) when sent rejects; onTime() is called when sent resolves in time.
 */
function createDeadlines(timeout, late) {
  const inFlight = [];
  let oldest = 0;
  let timer = null;

  function arm() {
    while (oldest < inFlight.length && inFlight[oldest].done) oldest++;
    if (oldest === inFlight.length) {
      inFlight.length = 0;
      oldest = 0;
      timer = null;
      return;
    }
    timer = setTimeout(expire, Math.max(1, inFlight[oldest].deadline - Date.now()));
    // The cache never keeps a process alive; the client's socket does while it is open.
    timer.unref();
  }

  function expire() {
    const now = Date.now();
    while (oldest < inFlight.length) {
      const op = inFlight[oldest];
      if (!op.done) {
        if (op.deadline > now) break;
        op.done = true;
        op.reject(op.wrap(late()));
      }
      oldest++;
    }
    arm();
  }

  function answered(op) {
    op.done = true;
    let n = inFlight.length;
    while (n > oldest && inFlight[n - 1].done) n--;
    inFlight.length = n;
    while (oldest < n && inFlight[oldest].done) oldest++;
    if (oldest === n) {
      inFlight.length = 0;
      oldest = 0;
    }
  }

  return function bound(sent, wrap, onTime) {
    return new Promise((resolve, reject) => {
      const op = { deadline: Date.now() + timeout, done: false, reject, wrap };
      inFlight.push(op);
      if (timer === null) arm();
      sent.then((v) => {
        if (op.done) return;
        answered(op);
        if (onTime !== undefined) onTime();
        resolve(v);
      }, (err) => {
        if (op.done) return;
        answered(op);
        reject(wrap(err));
      });
    });
  };
}

module.exports = { createDeadlines };
