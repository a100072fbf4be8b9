/* The replay viewer: steps a finished match deal by deal and trick by trick, from the embedded JSON.
 * Position (deal d, step k): k = 0 shows the deal after bidding; k = t shows trick t just won. */
(function () {
  "use strict";
  var root = document.getElementById("replay");
  if (!root) return;
  var replay = JSON.parse(document.getElementById("replay-data").textContent);
  var names = JSON.parse(document.getElementById("seat-names").textContent);
  var deals = replay.deals || [];
  var players = replay.players;
  if (!deals.length) { root.textContent = "This replay holds no deals."; return; }

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
      seat.appendChild(el("div", "seat-line" + (over ? (won[s] === bid ? " up" : " down") : ""), line));
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
    var tbl = el("table", "data compact");
    var head = el("tr"), row = el("tr");
    head.appendChild(el("th", null, "Total after " + done + " deal" + (done === 1 ? "" : "s")));
    row.appendChild(el("td", null, "score"));
    for (var s = 0; s < players; s++) {
      head.appendChild(el("th", "num", seatName(s)));
      row.appendChild(el("td", "num", String(totals[s])));
    }
    tbl.appendChild(head);
    tbl.appendChild(row);
    box.appendChild(tbl);
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
    history.replaceState(null, "", "#deal-" + deal.number + "-trick-" + k);
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
    if (!button) return;
    if (button.dataset.act !== "play") setPlaying(false);
    actions[button.dataset.act]();
  });
  root.querySelector('[data-act="speed"]').addEventListener("change", function (event) {
    speed = Number(event.target.value);
    if (playing) setPlaying(true);
  });
  document.addEventListener("keydown", function (event) {
    var name = KEYS[event.key];
    if (!name || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest && event.target.closest("input, select, textarea")) return;
    // Keys belong to the viewer while it is on screen or focused; elsewhere they scroll the page.
    if (!root.contains(document.activeElement) && !onScreen()) return;
    event.preventDefault();
    if (name !== "play") setPlaying(false);
    actions[name]();
  });

  var start = /^#deal-(\d+)-trick-(\d+)$/.exec(location.hash);
  if (start) move(Number(start[1]) - 1, Number(start[2])); else move(0, 0);
})();
