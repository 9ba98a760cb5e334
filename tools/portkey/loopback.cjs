// Loaded with `node --require` before the Portkey gateway: the gateway binds every interface
// and has no host option (build/start-server.js calls @hono/node-server's serve({port})), so
// every net.Server.listen() of the process is forced onto 127.0.0.1 (routersim talks to
// loopback only).
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[0] !== null && typeof args[0] === 'object') {
    args[0] = { ...args[0], host: '127.0.0.1' };
  } else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const [port, ...rest] = args;
    if (typeof rest[0] === 'string') rest.shift();
    args = [port, '127.0.0.1', ...rest];
  }
  return listen.apply(this, args);
};
