# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled core of the rules: a game as fixed-size C arrays, for search and self-play.

It plays exactly as ``engine.game.Game`` (the reference, tests/engine/test_core.py compares the
two action by action over random variants): the same deals from the same seed, through the
Mersenne Twister seeded and drawn from as CPython's ``random.Random`` is, the same legal actions,
trick winners and scores. Cards are indices 0..51 and hands bit masks, as in engine/cards.py.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy

from engine.dealing import check_seed
from engine.errors import IllegalActionError

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_clzll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil

DEF MT_N = 624
DEF MT_M = 397
DEF MAX_SEATS = 8
DEF MAX_DEALS = 128
DEF MAX_HAND = 52

# Phases, as engine.game.Phase in order.
cdef enum:
    BID = 0
    PLAY = 1
    OVER = 2

# engine.variant.FirstDealer, by position in _FIRST_DEALERS below.
cdef enum:
    FD_RANDOM = 0
    FD_DRAW = 1
    FD_FIRST_JACK = 2


cdef struct MT:
    uint32_t state[MT_N]
    int index


cdef void mt_init_genrand(MT* mt, uint32_t s) noexcept nogil:
    cdef int i
    mt.state[0] = s
    for i in range(1, MT_N):
        mt.state[i] = <uint32_t>(1812433253U * (mt.state[i - 1] ^ (mt.state[i - 1] >> 30)) + <uint32_t>i)
    mt.index = MT_N


cdef MT SEEDED_19650218  # init_genrand(19650218), where every init_by_array starts


cdef void mt_init_by_array(MT* mt, uint32_t* key, int length) noexcept nogil:
    # CPython's Modules/_randommodule.c init_by_array, which random.Random(int) uses; its
    # first step, init_genrand(19650218), is the same for every key and is copied.
    cdef int i = 1, j = 0, k
    memcpy(mt, &SEEDED_19650218, sizeof(MT))
    k = MT_N if MT_N > length else length
    while k > 0:
        mt.state[i] = <uint32_t>((mt.state[i] ^ ((mt.state[i - 1] ^ (mt.state[i - 1] >> 30)) * 1664525U)) + key[j] + <uint32_t>j)
        i += 1
        j += 1
        if i >= MT_N:
            mt.state[0] = mt.state[MT_N - 1]
            i = 1
        if j >= length:
            j = 0
        k -= 1
    k = MT_N - 1
    while k > 0:
        mt.state[i] = <uint32_t>((mt.state[i] ^ ((mt.state[i - 1] ^ (mt.state[i - 1] >> 30)) * 1566083941U)) - <uint32_t>i)
        i += 1
        if i >= MT_N:
            mt.state[0] = mt.state[MT_N - 1]
            i = 1
        k -= 1
    mt.state[0] = 0x80000000U
    mt.index = MT_N


cdef uint32_t mt_next(MT* mt) noexcept nogil:
    # The twist of each word is made when that word is drawn rather than all 624 at once: in
    # the same order, each reads the same words (those after it not yet twisted, those before
    # it twisted), so the stream is CPython's, and a deal that draws 50 words twists 50.
    cdef uint32_t y
    cdef int kk
    if mt.index >= MT_N:
        mt.index = 0
    kk = mt.index
    y = (mt.state[kk] & 0x80000000U) | (mt.state[kk + 1 if kk + 1 < MT_N else 0] & 0x7fffffffU)
    mt.state[kk] = mt.state[kk + MT_M if kk + MT_M < MT_N else kk + MT_M - MT_N] ^ (y >> 1) ^ (0x9908b0dfU if (y & 1U) else 0U)
    y = mt.state[kk]
    mt.index += 1
    y ^= (y >> 11)
    y ^= (y << 7) & 0x9d2c5680U
    y ^= (y << 15) & 0xefc60000U
    y ^= (y >> 18)
    return y


mt_init_genrand(&SEEDED_19650218, 19650218U)


cdef inline int bit_length(uint64_t x) noexcept nogil:
    return 64 - __builtin_clzll(x) if x else 0


cdef inline int draw_index(MT* mt, int bound) noexcept nogil:
    # engine.dealing.draw_index: getrandbits(k) for k <= 32 is the top k bits of one output.
    cdef int bits = bit_length(<uint64_t>bound)
    cdef uint32_t r = mt_next(mt) >> (32 - bits)
    while r >= <uint32_t>bound:
        r = mt_next(mt) >> (32 - bits)
    return <int>r


cdef void shuffled_prefix(MT* mt, int count, int* deck) noexcept nogil:
    # engine.dealing.shuffled_prefix over the indices 0..51.
    cdef int i, j, t
    for i in range(52):
        deck[i] = i
    if count > 51:
        count = 51
    for i in range(count):
        j = i + draw_index(mt, 52 - i)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t


cdef inline int highest_card(uint64_t mask) noexcept nogil:
    return bit_length(mask) - 1


cdef uint64_t SUIT_MASK[4]
for _s in range(4):
    SUIT_MASK[_s] = (<uint64_t>0x1FFF) << (13 * _s)


cdef class CoreRules:
    """What a game needs of its variant for a number of players, as C arrays (one per pair)."""

    cdef int players
    cdef int deal_count
    cdef int schedule[MAX_DEALS]
    cdef int turned_at[MAX_DEALS]
    cdef int fixed_trump[MAX_DEALS]
    cdef int score_offset[MAX_HAND + 1]
    cdef int* scores
    cdef list _scores_owner
    cdef bint hook
    cdef bint must_trump
    cdef bint has_target
    cdef long target
    cdef long winner_bonus
    cdef int first_dealer

    def __cinit__(self) -> None:
        self.scores = NULL

    def __dealloc__(self) -> None:
        if self.scores != NULL:
            PyMem_Free(self.scores)

    def __init__(self, rules: object, players: int, first_dealer: int) -> None:
        cdef int k, h, b, t, total = 0, offset = 0
        schedule = rules.schedule
        if len(schedule) > MAX_DEALS:
            raise ValueError(f"the compiled core plays at most {MAX_DEALS} deals")
        self.players = players
        self.deal_count = len(schedule)
        for k in range(self.deal_count):
            self.schedule[k] = schedule[k]
            self.turned_at[k], self.fixed_trump[k] = rules.deals[k]
        for h in range(MAX_HAND + 1):
            self.score_offset[h] = -1
        for h in set(schedule):
            total += (h + 1) * (h + 1)
        self.scores = <int*>PyMem_Malloc(sizeof(int) * (total if total else 1))
        if self.scores == NULL:
            raise MemoryError()
        for h in sorted(set(schedule)):
            table = rules.score_table(h)
            self.score_offset[h] = offset
            for b in range(h + 1):
                for t in range(h + 1):
                    self.scores[offset + b * (h + 1) + t] = table[b][t]
            offset += (h + 1) * (h + 1)
        variant = rules.variant
        self.hook = rules.hook
        self.must_trump = rules.must_trump
        self.has_target = variant.target_score is not None
        self.target = variant.target_score if self.has_target else 0
        self.winner_bonus = variant.winner_bonus
        self.first_dealer = first_dealer


cdef class CoreGame:
    """One game, played by bid numbers and card indices; ``clone`` copies it for search."""

    cdef CoreRules rules
    cdef MT mt
    cdef int n
    cdef public int first_dealer
    cdef public int dealer
    cdef int deal_k
    cdef public int hand_size
    cdef public int leader
    cdef int _to_act
    cdef int _phase
    cdef int bid_count
    cdef int tricks_done
    cdef int trick_len
    cdef int trick[MAX_SEATS]
    cdef int _trump
    cdef int _trump_card
    cdef uint64_t trump_suit
    cdef uint64_t trump_mask
    cdef uint64_t led_mask
    cdef uint64_t legal
    cdef uint64_t hands[MAX_SEATS]
    cdef int bids_[MAX_SEATS]
    cdef int won[MAX_SEATS]
    cdef long totals_[MAX_SEATS]
    cdef long bonus_[MAX_SEATS]

    def __init__(self, rules: CoreRules, seed: int) -> None:
        cdef uint32_t key[2]
        cdef int length
        self.rules = rules
        self.n = rules.players
        key[0] = <uint32_t>(seed & 0xFFFFFFFF)
        key[1] = <uint32_t>(seed >> 32)
        length = 2 if key[1] else 1
        mt_init_by_array(&self.mt, key, length)
        cdef int seat
        self.first_dealer = self._choose_first_dealer()
        self.deal_k = 0
        for seat in range(self.n):
            self.totals_[seat] = 0
            self.bonus_[seat] = 0
        self._start_deal()

    cdef int _choose_first_dealer(self) noexcept:
        cdef int deck[52]
        cdef int contenders[MAX_SEATS]
        cdef int ranks[MAX_SEATS]
        cdef int count = self.n, best, i, kept, start
        if self.rules.first_dealer == FD_RANDOM:
            return draw_index(&self.mt, self.n)
        if self.rules.first_dealer == FD_FIRST_JACK:
            start = draw_index(&self.mt, self.n)
            shuffled_prefix(&self.mt, 52, deck)
            for i in range(52):
                if deck[i] % 13 == 9:
                    return (start + i) % self.n
            return -1
        for i in range(count):
            contenders[i] = i
        while True:
            shuffled_prefix(&self.mt, count, deck)
            best = -1
            for i in range(count):
                ranks[i] = deck[i] % 13
                if ranks[i] > best:
                    best = ranks[i]
            kept = 0
            for i in range(count):
                if ranks[i] == best:
                    contenders[kept] = contenders[i]
                    kept += 1
            count = kept
            if count == 1:
                return contenders[0]

    cdef void _start_deal(self) noexcept:
        cdef int deck[52]
        cdef int n = self.n, k = self.deal_k, h, dealt, eldest, j, seat, turned
        h = self.rules.schedule[k]
        self.dealer = (self.first_dealer + k) % n
        eldest = (self.dealer + 1) % n
        dealt = n * h
        shuffled_prefix(&self.mt, dealt + 1, deck)
        for seat in range(n):
            self.hands[seat] = 0
            self.bids_[seat] = -1
            self.won[seat] = 0
        for j in range(dealt):
            seat = (eldest + j % n) % n
            self.hands[seat] |= (<uint64_t>1) << deck[j]
        turned = self.rules.turned_at[k]
        self._trump = self.rules.fixed_trump[k]
        self._trump_card = deck[turned] if turned >= 0 else -1
        if self._trump_card >= 0:
            self._trump = self._trump_card // 13
        self.trump_suit = SUIT_MASK[self._trump] if self._trump >= 0 else 0
        self.trump_mask = self.trump_suit if self.rules.must_trump else 0
        self.hand_size = h
        self.bid_count = 0
        self.tricks_done = 0
        self.trick_len = 0
        self.led_mask = 0
        self.legal = 0
        self.leader = eldest
        self._to_act = eldest
        self._phase = BID

    # -- facts ---------------------------------------------------------------------------

    @property
    def phase(self) -> int:
        """0 while bidding, 1 while playing, 2 once the game is over."""
        return self._phase

    @property
    def to_act(self) -> int | None:
        """The seat to move, or None once the game is over."""
        return None if self._phase == OVER else self._to_act

    @property
    def deal_number(self) -> int:
        """The current deal, counting from 1."""
        return self.deal_k + 1

    @property
    def trump(self) -> int:
        """The trump suit of the current deal (0..3 for C D H S), or -1."""
        return self._trump

    @property
    def trump_card(self) -> int:
        """The card turned for trump in the current deal, or -1."""
        return self._trump_card

    @property
    def totals(self) -> list[int]:
        """Each seat's total so far (with the winner's bonus once the game is over)."""
        return [self.totals_[s] for s in range(self.n)]

    @property
    def bonus(self) -> list[int]:
        """The winner's bonus each seat got at the end."""
        return [self.bonus_[s] for s in range(self.n)]

    @property
    def bids(self) -> list[int]:
        """Bids of the current deal by seat (-1 where not made)."""
        return [self.bids_[s] for s in range(self.n)]

    @property
    def tricks_won(self) -> list[int]:
        """Tricks won so far in the current deal, by seat."""
        return [self.won[s] for s in range(self.n)]

    def hand_mask(self, seat: int) -> int:
        """The cards a seat holds now, as a bit mask."""
        if not 0 <= seat < self.n:
            raise IndexError(f"no seat {seat}")
        return self.hands[seat]

    def legal_mask(self) -> int:
        """Cards the seat to act may play, as a bit mask (0 outside the play phase)."""
        return self.legal

    def legal_bids(self) -> int:
        """Bids the seat to act may make, as a bit mask (bit b: bid b); 0 outside bidding."""
        cdef int forbidden = self._forbidden()
        cdef uint64_t bids
        if self._phase != BID:
            return 0
        bids = ((<uint64_t>1) << (self.hand_size + 1)) - 1
        if forbidden >= 0:
            bids &= ~((<uint64_t>1) << forbidden)
        return bids

    cdef int _forbidden(self) noexcept:
        cdef int total = 0, seat
        if not self.rules.hook or self._phase != BID or self._to_act != self.dealer:
            return -1
        for seat in range(self.n):
            if self.bids_[seat] >= 0:
                total += self.bids_[seat]
        total = self.hand_size - total
        return total if 0 <= total <= self.hand_size else -1

    # -- actions -------------------------------------------------------------------------

    def bid(self, int bid) -> None:
        """Make a bid for the seat to act; IllegalActionError unless it is in ``legal_bids``."""
        if self._phase != BID or not 0 <= bid <= self.hand_size or bid == self._forbidden():
            raise IllegalActionError(f"bid {bid} is not legal now")
        self._bid(bid)

    def play(self, int card) -> None:
        """Play a card index for the seat to act; IllegalActionError unless it is legal."""
        if self._phase != PLAY or not 0 <= card < 52 or not (self.legal >> card) & 1:
            raise IllegalActionError(f"card {card} is not legal now")
        self._play(card)

    cdef void _bid(self, int bid) noexcept:
        self.bids_[self._to_act] = bid
        self.bid_count += 1
        if self.bid_count == self.n:
            self._phase = PLAY
            self._to_act = self.leader
            self.legal = self.hands[self.leader]
        else:
            self._to_act = self._to_act + 1 if self._to_act + 1 < self.n else 0

    cdef void _play(self, int card) noexcept:
        cdef int seat = self._to_act
        cdef uint64_t hand
        self.hands[seat] ^= (<uint64_t>1) << card
        self.trick[self.trick_len] = card
        self.trick_len += 1
        if self.trick_len == 1:
            self.led_mask = SUIT_MASK[card // 13]
        elif self.trick_len == self.n:
            self._end_trick()
            return
        seat = seat + 1 if seat + 1 < self.n else 0
        self._to_act = seat
        hand = self.hands[seat]
        self.legal = hand & self.led_mask
        if not self.legal:
            self.legal = hand & self.trump_mask
            if not self.legal:
                self.legal = hand

    cdef void _end_trick(self) noexcept:
        cdef uint64_t cards = 0, best
        cdef int i, winner_card, winner = 0
        for i in range(self.trick_len):
            cards |= (<uint64_t>1) << self.trick[i]
        best = cards & self.trump_suit
        if not best:
            best = cards & self.led_mask
        winner_card = highest_card(best)
        for i in range(self.trick_len):
            if self.trick[i] == winner_card:
                winner = (self.leader + i) % self.n
        self.won[winner] += 1
        self.tricks_done += 1
        self.trick_len = 0
        self.led_mask = 0
        self.leader = winner
        self._to_act = winner
        if self.tricks_done == self.hand_size:
            self.legal = 0
            self._finish_deal()
        else:
            self.legal = self.hands[winner]

    cdef void _finish_deal(self) noexcept:
        cdef int h = self.hand_size, seat, offset = self.rules.score_offset[h]
        cdef long best
        for seat in range(self.n):
            self.totals_[seat] += self.rules.scores[offset + self.bids_[seat] * (h + 1) + self.won[seat]]
        best = self.totals_[0]
        for seat in range(1, self.n):
            if self.totals_[seat] > best:
                best = self.totals_[seat]
        self.deal_k += 1
        if (self.rules.has_target and best >= self.rules.target) or self.deal_k == self.rules.deal_count:
            self.deal_k -= 1  # deal_number stays that of the last deal played, as in Game
            self._phase = OVER
            if self.rules.winner_bonus:
                for seat in range(self.n):
                    if self.totals_[seat] == best:
                        self.bonus_[seat] = self.rules.winner_bonus
                        self.totals_[seat] += self.rules.winner_bonus
        else:
            self._start_deal()

    # -- search --------------------------------------------------------------------------

    def clone(self) -> CoreGame:
        """An independent copy: the same state and the same random stream from here."""
        cdef CoreGame other = CoreGame.__new__(CoreGame)
        other.rules = self.rules
        memcpy(&other.mt, &self.mt, sizeof(MT))
        other.n = self.n
        other.first_dealer = self.first_dealer
        other.dealer = self.dealer
        other.deal_k = self.deal_k
        other.hand_size = self.hand_size
        other.leader = self.leader
        other._to_act = self._to_act
        other._phase = self._phase
        other.bid_count = self.bid_count
        other.tricks_done = self.tricks_done
        other.trick_len = self.trick_len
        memcpy(other.trick, self.trick, sizeof(self.trick))
        other._trump = self._trump
        other._trump_card = self._trump_card
        other.trump_suit = self.trump_suit
        other.trump_mask = self.trump_mask
        other.led_mask = self.led_mask
        other.legal = self.legal
        memcpy(other.hands, self.hands, sizeof(self.hands))
        memcpy(other.bids_, self.bids_, sizeof(self.bids_))
        memcpy(other.won, self.won, sizeof(self.won))
        memcpy(other.totals_, self.totals_, sizeof(self.totals_))
        memcpy(other.bonus_, self.bonus_, sizeof(self.bonus_))
        return other

    def set_hands(self, hands: list[int]) -> None:
        """Give the seats other hands of the same sizes (a sampled world for search)."""
        cdef int seat
        if len(hands) != self.n:
            raise IllegalActionError(f"need {self.n} hands")
        for seat in range(self.n):
            if bin(hands[seat]).count("1") != bin(self.hands[seat]).count("1"):
                raise IllegalActionError(f"seat {seat}: a hand of another size")
        for seat in range(self.n):
            self.hands[seat] = hands[seat]
        if self._phase == PLAY:
            self._refresh_legal()

    cdef void _refresh_legal(self) noexcept:
        cdef uint64_t hand = self.hands[self._to_act]
        self.legal = hand & self.led_mask
        if not self.legal:
            self.legal = hand & self.trump_mask
            if not self.legal:
                self.legal = hand

    def playout(self, seed: int, deals: int = 0) -> None:
        """Play uniformly random legal actions drawn from SplitMix64 seeded with ``seed``: to
        the game's end, or until ``deals`` more deals have finished (``deals`` > 0)."""
        cdef uint64_t state
        cdef int stop_at = self.deal_k + deals if deals > 0 else -1
        check_seed(seed)
        state = <uint64_t>seed
        self._playout(&state, stop_at)

    cdef void _playout(self, uint64_t* rng, int stop_at) noexcept:
        cdef uint64_t options, rest
        cdef int count, pick, action, bid
        while self._phase != OVER and self.deal_k != stop_at:
            if self._phase == BID:
                options = ((<uint64_t>1) << (self.hand_size + 1)) - 1
                bid = self._forbidden()
                if bid >= 0:
                    options &= ~((<uint64_t>1) << bid)
            else:
                options = self.legal
            count = popcount(options)
            pick = splitmix_below(rng, count)
            rest = options
            while pick:
                rest &= rest - 1
                pick -= 1
            action = __builtin_ctzll(rest)
            if self._phase == BID:
                self._bid(action)
            else:
                self._play(action)


cdef inline int popcount(uint64_t x) noexcept nogil:
    return __builtin_popcountll(x)


cdef inline uint64_t splitmix_next(uint64_t* state) noexcept nogil:
    # SplitMix64, as engine/core.py SplitMix64 in Python.
    cdef uint64_t z
    state[0] += 0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline int splitmix_below(uint64_t* state, int bound) noexcept nogil:
    # Uniform in 0..bound-1 by rejection on the top bits, as SplitMix64.below in engine/core.py.
    cdef int bits = bit_length(<uint64_t>bound)
    cdef uint64_t r = splitmix_next(state) >> (64 - bits)
    while r >= <uint64_t>bound:
        r = splitmix_next(state) >> (64 - bits)
    return <int>r
