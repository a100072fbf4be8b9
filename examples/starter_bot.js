// A starter Oh Hell bot in plain Node.js (20 or later): no npm packages, one file, ready to edit.
//
// Run it:    node starter_bot.js --port 8001
// With a secret (recommended; the arena signs every request with your bot's secret):
//            OHHELL_SECRET=your-secret node starter_bot.js --port 8001
//
// The arena POSTs a JSON object with "protocol": "ohhell/1" and a "type":
//   hello   any JSON object answer passes the check
//   bid     answer {"bid": <one of request.legal>}
//   play    answer {"card": <one of request.legal>}
//   result  the match is over; the answer is ignored
// Any other type is news this bot does not know: it answers {} and carries on.
// Edit chooseBid and chooseCard to make it play better.
"use strict";

const crypto = require("node:crypto");
const http = require("node:http");

const RANKS = "23456789TJQKA";
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_SKEW_S = 300;
// The arena closes a connection it has left idle for 30 s; staying open longer than that
// means the arena, not this bot, closes idle connections, so it never reuses one this bot is
// closing at the same moment (which would cost the call a connection error).
const KEEP_ALIVE_MS = 65 * 1000;
// The exact forms the arena sends; anything else is refused (never parsed).
const TIMESTAMP = /^[0-9]{1,12}$/;
const REQUEST_ID = /^[0-9a-f]{32}$/;

/** A card's rank as 0 (two) to 12 (ace); cards are written like "TD" or "AS". */
function rank(card) {
  return RANKS.indexOf(card[0]);
}

/** Bid roughly the tricks our aces and high trumps should take, as near as legal allows. */
function chooseBid(request) {
  const trump = request.trump;
  const highTrump = RANKS.indexOf("Q");
  const expected = (request.hand || []).filter(
    (card) => card[0] === "A" || (card[1] === trump && rank(card) >= highTrump),
  ).length;
  let best = request.legal[0];
  for (const bid of request.legal) {
    const closer = Math.abs(bid - expected) - Math.abs(best - expected);
    if (closer < 0 || (closer === 0 && bid < best)) best = bid;
  }
  return best;
}

/** Whether `card` beats `best`, the best card so far in a trick led with suit `led`. */
function beats(card, best, led, trump) {
  if (card[1] === best[1]) return rank(card) > rank(best);
  return card[1] === trump || (card[1] === led && best[1] !== trump);
}

/** Win the trick as cheaply as possible if we can, otherwise throw our lowest card. */
function chooseCard(request) {
  const legal = [...request.legal].sort((a, b) => rank(a) - rank(b));
  const trick = (request.trick && request.trick.cards) || [];
  if (trick.length === 0) return legal[0];
  const led = trick[0][1];
  let best = trick[0];
  for (const card of trick.slice(1)) {
    if (beats(card, best, led, request.trump)) best = card;
  }
  const winner = legal.find((card) => beats(card, best, led, request.trump));
  return winner === undefined ? legal[0] : winner;
}

/** The answer to one arena request. */
function answer(request) {
  switch (request.type) {
    case "bid":
      return { bid: chooseBid(request) };
    case "play":
      return { card: chooseCard(request) };
    case "hello":
      return { name: "starter bot (js)", ok: true };
    default:
      return {}; // "result", or a type newer than this bot: nothing to answer
  }
}

/** The signature header the arena sends: sha256=HMAC-SHA256(secret, "<ts>.<id>." + body). */
function expectedSignature(secret, timestamp, requestId, body) {
  const signed = Buffer.concat([Buffer.from(`${timestamp}.${requestId}.`, "ascii"), body]);
  const mac = crypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(signed);
  return "sha256=" + mac.digest("hex");
}

/** Tell whether the arena signed this body (a Buffer) within the last 5 minutes. */
function signatureOk(secret, body, timestamp, requestId, signature) {
  if (typeof timestamp !== "string" || typeof requestId !== "string") return false;
  if (typeof signature !== "string") return false;
  if (!TIMESTAMP.test(timestamp) || !REQUEST_ID.test(requestId)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_S) return false;
  const expected = Buffer.from(expectedSignature(secret, timestamp, requestId, body), "ascii");
  const given = Buffer.from(signature, "utf8");
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** Request ids already answered; a signed request seen twice is a replay. */
class SeenRequests {
  constructor() {
    this.firstSeen = new Map(); // id -> seconds; a Map keeps insertion (arrival) order
  }

  /** Record `requestId`; false if it was seen before (within the replay window). */
  firstTime(requestId) {
    const now = Date.now() / 1000;
    // Oldest first; past twice the skew its timestamp check fails anyway: forget it.
    for (const [oldest, seenAt] of this.firstSeen) {
      if (now - seenAt <= 2 * MAX_SKEW_S) break;
      this.firstSeen.delete(oldest);
    }
    if (this.firstSeen.has(requestId)) return false;
    this.firstSeen.set(requestId, now);
    return true;
  }
}

/** Send a JSON answer with a Content-Length, so the connection can be reused. */
function reply(res, status, data) {
  const payload = Buffer.from(JSON.stringify(data), "utf8");
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": payload.length,
  });
  res.end(payload);
}

function makeHandler(secret, seen, verbose) {
  return (req, res) => {
    if (req.method !== "POST") return reply(res, 405, { error: "POST only" });
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.setHeader("Connection", "close");
        reply(res, 413, { error: "request too large" });
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on("end", () => {
      if (size > MAX_BODY_BYTES) return;
      const body = Buffer.concat(chunks);
      const requestId = req.headers["x-ohhell-request-id"];
      if (secret) {
        const timestamp = req.headers["x-ohhell-timestamp"];
        const signature = req.headers["x-ohhell-signature"];
        if (!signatureOk(secret, body, timestamp, requestId, signature)) {
          return reply(res, 401, { error: "bad signature" });
        }
        if (!seen.firstTime(requestId)) {
          return reply(res, 409, { error: "repeated request id" });
        }
      }
      let request;
      try {
        request = JSON.parse(body.toString("utf8"));
        if (request === null || typeof request !== "object" || Array.isArray(request)) {
          throw new TypeError("the body is not a JSON object");
        }
        const data = answer(request);
        if (verbose) console.log(`${request.type} -> ${JSON.stringify(data)}`);
        reply(res, 200, data);
      } catch (error) {
        reply(res, 400, { error: `cannot answer: ${error.message}` });
      }
    });
  };
}

function parseArgs(argv) {
  const args = { host: "127.0.0.1", port: 8001, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--host") args.host = argv[++i];
    else if (argv[i] === "--port") args.port = Number(argv[++i]); // 0 picks a free port
    else if (argv[i] === "--verbose") args.verbose = true;
    else {
      console.error(`usage: node starter_bot.js [--host 0.0.0.0] [--port 8001] [--verbose]`);
      process.exit(2);
    }
  }
  return args;
}

/** Serve the bot until interrupted. */
function main() {
  const args = parseArgs(process.argv.slice(2));
  const secret = process.env.OHHELL_SECRET || "";
  // noDelay sets TCP_NODELAY; without it small answers can wait ~40 ms for Nagle.
  const handler = makeHandler(secret, new SeenRequests(), args.verbose);
  const server = http.createServer({ noDelay: true }, handler);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1000; // Node wants this above keepAliveTimeout
  server.listen(args.port, args.host, () => {
    const port = server.address().port;
    const signed = secret ? "checking signatures" : "NOT checking signatures";
    console.log(`starter bot listening on http://${args.host}:${port}/ (${signed})`);
  });
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => process.exit(0));
  }
}

if (require.main === module) main();

module.exports = { answer, chooseBid, chooseCard, expectedSignature, signatureOk, SeenRequests };
