/* The replay viewer: steps a finished match deal by deal and trick by trick, from the replay it
 * fetches from the API (the viewer's data-replay-url; sent compressed, cached once finished).
 * Position (deal d, step k): k = 0 shows the deal after bidding; k = t shows trick t just won. */
(function () {
  "use strict";
  var root = document.getElementById("replay");
  if (!root) return;
  var replayUrl = root.dataset.replayUrl;
  var namesNode = document.getElementById("seat-names");
  var names = namesNode ? JSON.parse(namesNode.textContent) : [];
  var deals = [], players = 0, decisions = {};
  var scrubber = root.querySelector(".scrubber");
  var positions = [];  // every (deal, trick) the viewer can show, in order, for the scrubber

  var SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  var SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  var HAND_ORDER = "SHCD";
  var RANKS = "23456789TJQKA";
  var pos = { deal: 0, trick: 0 };
  var playing = null;
  var speed = 1000;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = text;
    return node;
  }

  function card(code, extra) {
    var suit = code.charAt(1), rank = code.charAt(0);
    var node = el("span", "card" + (suit === "D" || suit === "H" ? " red" : "") + (extra ? " " + extra : ""));
    node.textContent = (rank === "T" ? "10" : rank) + SUITS[suit];
    node.dataset.card = code;
    node.title = code;
    return node;
  }

  function byHandOrder(a, b) {
    var s = HAND_ORDER.indexOf(a.charAt(1)) - HAND_ORDER.indexOf(b.charAt(1));
    return s || RANKS.indexOf(b.charAt(0)) - RANKS.indexOf(a.charAt(0));
  }

  // Decisions recorded by the arena (latency, time bank left, fallback after a fault), keyed by
  // their place.
  function decisionKey(deal, type, seat, trick) { return deal + ":" + type + ":" + seat + ":" + (trick || 0); }
  function decisionOf(deal, type, seat, trick) { return decisions[decisionKey(deal, type, seat, trick)]; }

  function decisionNote(node, decision) {
    if (!decision) return node;
    if (decision.latency_ms != null) node.appendChild(el("small", "latency", " " + Math.round(decision.latency_ms) + " ms"));
    if (decision.time_bank_ms != null) {
      var bank = el("small", "bank", " · " + (decision.time_bank_ms / 1000).toFixed(1) + " s bank left");
      bank.dataset.bankMs = String(decision.time_bank_ms);
      bank.title = "the bot's time bank left after this move: " + decision.time_bank_ms + " ms";
      node.appendChild(bank);
    }
    if (decision.fallback) {
      var mark = el("span", "fallback", "⚠ fallback");
      mark.title = "the bot's answer was replaced by the fallback move" + (decision.fault ? " (" + decision.fault.replace(/_/g, " ") + ")" : "");
      node.appendChild(document.createTextNode(" "));
      node.appendChild(mark);
    }
    return node;
  }

  function load(data, seatNames) {
    names = seatNames || [];
    deals = data.deals || [];
    players = data.players;
    decisions = {};
    (data.decisions || []).forEach(function (d) { decisions[decisionKey(d.deal, d.type, d.seat, d.trick)] = d; });
    positions = [];
    deals.forEach(function (deal, d) { for (var k = 0; k <= deal.tricks.length; k++) positions.push([d, k]); });
    if (scrubber) { scrubber.max = Math.max(positions.length - 1, 0); scrubber.value = 0; }
  }

  function seatName(seat) { return names[seat] || "seat " + (seat + 1); }
  function tricksIn(d) { return deals[d].tricks.length; }

  function move(deal, trick) {
    pos.deal = Math.max(0, Math.min(deal, deals.length - 1));
    pos.trick = Math.max(0, Math.min(trick, tricksIn(pos.deal)));
    render();
  }

  function next() {
    if (pos.trick < tricksIn(pos.deal)) return move(pos.deal, pos.trick + 1), true;
    if (pos.deal < deals.length - 1) return move(pos.deal + 1, 0), true;
    return false;
  }

  function prev() {
    if (pos.trick > 0) move(pos.deal, pos.trick - 1);
    else if (pos.deal > 0) move(pos.deal - 1, tricksIn(pos.deal - 1));
  }

  function renderHead(deal) {
    var head = root.querySelector(".deal-head");
    head.textContent = "";
    head.appendChild(el("strong", null, "Deal " + deal.number + " of " + deals.length));
    head.appendChild(document.createTextNode(" · " + deal.hand_size + " card" + (deal.hand_size === 1 ? "" : "s") +
      " · dealer " + seatName(deal.dealer) + " · trump: "));
    var trump = el("span", "trump");
    if (deal.trump) {
      trump.appendChild(el("span", "suit" + (deal.trump === "D" || deal.trump === "H" ? " red" : ""),
        SUITS[deal.trump] + " " + SUIT_NAMES[deal.trump]));
      if (deal.trump_card) { trump.appendChild(document.createTextNode(" (turned ")); trump.appendChild(card(deal.trump_card)); trump.appendChild(document.createTextNode(")")); }
    } else {
      trump.textContent = "none";
    }
    head.appendChild(trump);
  }

  function renderSeats(deal, k) {
    var table = root.querySelector(".table");
    table.textContent = "";
    var gone = {}, won = new Array(players).fill(0);
    deal.tricks.slice(0, k).forEach(function (t) {
      t.cards.forEach(function (c) { gone[c] = true; });
      if (t.winner != null) won[t.winner] += 1;
    });
    var current = k > 0 ? deal.tricks[k - 1] : null;
    var inTrick = {};
    if (current) current.cards.forEach(function (c, i) { inTrick[(current.leader + i) % players] = c; });
    var over = k === deal.tricks.length && k === deal.hand_size;
    for (var s = 0; s < players; s++) {
      var seat = el("div", "seat" + (current && current.winner === s ? " won" : ""));
      seat.dataset.seat = s;
      var title = el("div", "seat-name", seatName(s));
      if (deal.dealer === s) title.appendChild(el("span", "badge", "dealer"));
      if (current && current.leader === s) title.appendChild(el("span", "badge", "led"));
      seat.appendChild(title);
      var bid = deal.bids[s];
      var line = "bid " + (bid == null ? "–" : bid) + " · won " + won[s];
      if (over) line += " · " + (won[s] === bid ? "made it" : "missed") + ", scores " + deal.scores[s];
      var lineNode = el("div", "seat-line" + (over ? (won[s] === bid ? " up" : " down") : ""), line);
      seat.appendChild(lineNode);
      var bidDecision = decisionOf(deal.number, "bid", s);
      if (bidDecision) seat.appendChild(decisionNote(el("div", "seat-line bid-decision", "bid took"), bidDecision));
      var slot = el("div", "played");
      if (inTrick[s]) slot.appendChild(card(inTrick[s], current.winner === s ? "winner" : ""));
      else slot.appendChild(el("span", "card blank", "·"));
      seat.appendChild(slot);
      var hand = el("div", "hand");
      deal.hands[s].slice().sort(byHandOrder).forEach(function (c) {
        if (!gone[c]) hand.appendChild(card(c));
      });
      seat.appendChild(hand);
      table.appendChild(seat);
    }
  }

  function renderTrick(deal, k) {
    var info = root.querySelector(".trick-info");
    info.textContent = "";
    if (k === 0) {
      var bids = deal.bids.map(function (b, s) { return seatName(s) + " " + (b == null ? "–" : b); }).join(", ");
      info.appendChild(el("span", null, "Bids: " + bids + ". Press → to play the first trick."));
      return;
    }
    var t = deal.tricks[k - 1];
    info.appendChild(el("strong", null, "Trick " + k + " of " + deal.hand_size + ": "));
    info.appendChild(document.createTextNode(seatName(t.leader) + " led; "));
    t.cards.forEach(function (c, i) {
      var s = (t.leader + i) % players;
      info.appendChild(document.createTextNode(seatName(s) + " "));
      info.appendChild(card(c, s === t.winner ? "winner" : ""));
      decisionNote(info, decisionOf(deal.number, "play", s, k));
      info.appendChild(document.createTextNode(i < t.cards.length - 1 ? ", " : ". "));
    });
    var winner = el("span", "trick-winner", t.winner == null ? "unfinished" : "Won by " + seatName(t.winner));
    winner.dataset.winner = t.winner == null ? "" : t.winner;
    info.appendChild(winner);
  }

  function renderTotals(k) {
    var box = root.querySelector(".totals");
    box.textContent = "";
    var done = pos.deal + (k === tricksIn(pos.deal) ? 1 : 0);
    var totals = new Array(players).fill(0);
    deals.slice(0, done).forEach(function (d) {
      (d.scores || []).forEach(function (v, s) { totals[s] += v; });
    });
    box.appendChild(el("strong", null, "Total after " + done + " deal" + (done === 1 ? "" : "s") + ": "));
    for (var s = 0; s < players; s++) {
      var chip = el("span", "total", seatName(s) + " ");
      chip.appendChild(el("strong", "num", String(totals[s])));
      box.appendChild(chip);
    }
  }

  function render() {
    var deal = deals[pos.deal], k = pos.trick;
    renderHead(deal);
    renderSeats(deal, k);
    renderTrick(deal, k);
    renderTotals(k);
    root.dataset.deal = deal.number;
    root.dataset.trick = k;
    root.querySelector(".position").textContent = "deal " + deal.number + "/" + deals.length +
      " · trick " + k + "/" + deal.tricks.length;
    if (scrubber) {
      scrubber.value = positions.findIndex(function (p) { return p[0] === pos.deal && p[1] === k; });
      scrubber.setAttribute("aria-valuetext", "deal " + deal.number + ", trick " + k);
    }
    if (!root.dataset.file) history.replaceState(null, "", "#deal-" + deal.number + "-trick-" + k);
  }

  function setPlaying(on) {
    clearInterval(playing);
    playing = on ? setInterval(function () { if (!next()) setPlaying(false); }, speed) : null;
    var button = root.querySelector('[data-act="play"]');
    button.textContent = on ? "⏸ pause" : "▶ play";
    root.dataset.playing = on ? "true" : "false";
  }

  var actions = {
    first: function () { move(0, 0); },
    last: function () { move(deals.length - 1, tricksIn(deals.length - 1)); },
    prev: prev,
    next: next,
    "prev-deal": function () { move(pos.deal - 1, 0); },
    "next-deal": function () {
      if (pos.deal < deals.length - 1) move(pos.deal + 1, 0); else move(pos.deal, tricksIn(pos.deal));
    },
    play: function () { setPlaying(!playing); }
  };

  function onScreen() {
    var box = root.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight;
  }

  var KEYS = {
    ArrowLeft: "prev", ArrowRight: "next", ArrowUp: "prev-deal", PageUp: "prev-deal",
    ArrowDown: "next-deal", PageDown: "next-deal", " ": "play", Home: "first", End: "last"
  };

  root.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-act]");
    if (!button || !deals.length) return;
    if (button.dataset.act !== "play") setPlaying(false);
    actions[button.dataset.act]();
  });
  if (scrubber) scrubber.addEventListener("input", function () {
    setPlaying(false);
    var p = positions[Number(scrubber.value)];
    if (p) move(p[0], p[1]);
  });

  // A replay file from the API's download or from `ohhell`: shown in place of this match's.
  var fileInput = document.getElementById("replay-file");
  var fileNote = document.getElementById("replay-file-note");
  if (fileInput) fileInput.addEventListener("change", function () {
    var file = fileInput.files[0];
    if (!file) return;
    file.text().then(function (text) {
      var data = JSON.parse(text);
      if (!data || !Array.isArray(data.deals) || !data.deals.length || !data.players) {
        throw new Error("it holds no deals");
      }
      setPlaying(false);
      root.dataset.file = file.name;
      root.hidden = false;
      load(data, data.names);
      move(0, 0);
      fileNote.textContent = "Showing " + file.name + " (" + data.deals.length + " deals, " + data.players + " seats).";
      fileNote.className = "note";
    }).catch(function (error) {
      fileNote.textContent = "Cannot show " + file.name + ": " + (error.message || error) + ". Choose a replay JSON file.";
      fileNote.className = "note alert";
    });
  });

  root.querySelector('[data-act="speed"]').addEventListener("change", function (event) {
    speed = Number(event.target.value);
    if (playing) setPlaying(true);
  });
  document.addEventListener("keydown", function (event) {
    var name = KEYS[event.key];
    if (!name || !deals.length || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest && event.target.closest("input, select, textarea")) return;
    // Keys belong to the viewer while it is on screen or focused; elsewhere they scroll the page.
    if (!root.contains(document.activeElement) && !onScreen()) return;
    event.preventDefault();
    if (name !== "play") setPlaying(false);
    actions[name]();
  });

  function show(replay) {
    if (!(replay.deals || []).length) {
      root.querySelector(".deal-head").textContent = "This replay holds no deals.";
      return;
    }
    load(replay, names);
    var start = /^#deal-(\d+)-trick-(\d+)$/.exec(location.hash);
    if (start) move(Number(start[1]) - 1, Number(start[2])); else move(0, 0);
  }

  if (!replayUrl) {
    root.hidden = true;  // the viewer shows once a file is loaded
    return;
  }
  root.querySelector(".deal-head").textContent = "Loading the replay…";
  fetch(replayUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
    .then(function (response) {
      if (!response.ok) throw new Error("the server answered " + response.status);
      return response.json();
    })
    .then(function (replay) {
      if (root.dataset.file) return;  // a file the viewer chose meanwhile stays shown
      show(replay);
    })
    .catch(function (error) {
      root.querySelector(".deal-head").textContent = "Cannot load the replay: " + (error.message || error) + ".";
    })
    .then(function () { root.dataset.loaded = "true"; });
})();
