#!/usr/bin/env python3
"""Writes a 100-reading example match (recordings/example/) and, computed here by hand
from the rule book scenario by scenario, the card counts after every reading
(tests/data/match100_expected.csv). Run again to regenerate: python3 tests/data/make_match100.py
"""
import json, random, os

random.seed(20261122)
root = os.path.join(os.path.dirname(__file__), "..", "..")
out_dir = os.path.join(root, "recordings", "example")

poems = list(range(1, 101))
random.shuffle(poems)
field = {"A": poems[:25], "B": poems[25:50]}
owner = {p: "A" for p in field["A"]} | {p: "B" for p in field["B"]}

def row_y(player, row):
    d = 15 + 36.5 + 83 * (row - 1)
    return -d if player == "A" else d

cards = []
for pl in "AB":
    for i, p in enumerate(field[pl]):
        row = 1 + i // 9 if i < 18 else 3
        col = i % 9 if i < 18 else i - 18
        x = -435 + 26 + col * 60 + (row - 1) * 3
        cards.append({"poem": p, "owner": pl, "row": row, "x_mm": round(x, 1), "y_mm": row_y(pl, row), "angle_deg": 0.0})
layout = {
    "field": {"width_mm": 870, "gap_mm": 30, "row_gap_mm": 10, "card_w_mm": 52, "card_h_mm": 73},
    "players": {"A": {"name": "Player A", "lead_hand": "right"}, "B": {"name": "Player B", "lead_hand": "left"}},
    "cards": cards,
}
hand = {"A": "right", "B": "left"}
other = {"A": "B", "B": "A"}
order = poems[:]
random.shuffle(order)

readings, events, expected = [], [], []
count = {"A": 25, "B": 25}
winner = None

def touch(t, pl, p, h=None):
    events.append({"t_s": round(t, 4), "kind": "touch", "player": pl, "hand": h or hand[pl], "poem": p, "direct": True})

def send(t, frm, n):
    """frm sends n cards (capped at what frm holds); returns how many were sent."""
    sent = 0
    for k in range(n):
        mine = [p for p, o in owner.items() if o == frm]
        if not mine:
            break
        p = random.choice(mine)
        events.append({"t_s": round(t + 0.6 * k, 4), "kind": "send", "from": frm, "poem": p})
        owner[p] = other[frm]
        events.append({"t_s": round(t + 0.6 * k + 0.3, 4), "kind": "place", "poem": p, "owner": other[frm], "row": 1, "x_mm": 0.0, "y_mm": row_y(other[frm], 1)})
        sent += 1
    return sent

def foul_card(pl, territory):
    """A card on `territory` to touch by mistake, other than the read one."""
    mine = [p for p, o in owner.items() if o == territory]
    return random.choice(mine) if mine else None

for seq, poem in enumerate(order, 1):
    k0 = 10.0 + 12.0 * (seq - 1)
    readings.append({"seq": seq, "poem": poem, "kami_start_s": k0,
                     "onsets_s": [round(k0 + (0 if i == 0 else 1.15 + 0.26 * (i - 1)), 3) for i in range(6)],
                     "kami_end_s": k0 + 4.0, "shimo_start_s": k0 + 8.0})
    if winner:
        continue
    t = k0 + 1.9
    o = owner.pop(poem, None)
    if o is None:
        # Dead card (karafuda).
        s = random.random()
        if s < 0.25:
            # 23-1: a touch during a dead card; the opponent sends one.
            pl = random.choice("AB")
            c = foul_card(pl, random.choice("AB"))
            if c:
                touch(t, pl, c)
                count[pl] += 1; count[other[pl]] -= send(t + 1.5, other[pl], 1)
                scen = f"dead card, {pl} touches a card: {other[pl]} sends 1"
            else:
                scen = "dead card"
        elif s < 0.35:
            # 25-3: both territories during a dead card; the opponent sends two.
            pl = random.choice("AB")
            ca, cb = foul_card(pl, "A"), foul_card(pl, "B")
            if ca and cb:
                touch(t, pl, ca); touch(t + 0.05, pl, cb)
                n = send(t + 1.5, other[pl], 2)
                count[pl] += n; count[other[pl]] -= n
                scen = f"dead card, {pl} touches both territories: {other[pl]} sends {n}"
            else:
                scen = "dead card"
        else:
            scen = "dead card, nobody moves"
    else:
        count[o] -= 1
        s = random.random()
        opp = other[o]
        if s < 0.30:
            touch(t, o, poem); touch(t + 0.03, opp, poem)
            scen = f"{o} takes own card"
        elif s < 0.55:
            touch(t, opp, poem); touch(t + 0.02, o, poem)
            n = send(t + 1.5, opp, 1)
            count[opp] -= n; count[o] += n
            scen = f"{opp} takes from {o}: sends {n}"
        elif s < 0.63:
            touch(t, o, poem); touch(t, opp, poem)
            scen = f"simultaneous: {o} (owner)"
        elif s < 0.73:
            # 25-2: take from the opponent plus the opponent's otetsuki: two cards.
            c = foul_card(o, opp)
            if c is None:
                touch(t, o, poem); scen = f"{o} takes own card"
            else:
                touch(t - 0.1, o, c); touch(t, opp, poem)
                n = send(t + 1.5, opp, 2)
                count[opp] -= n; count[o] += n
                scen = f"{opp} takes from {o}, {o} touched {opp}'s territory: sends {n}"
        elif s < 0.81:
            # 17-2: push-out by the opponent.
            events.append({"t_s": round(t, 4), "kind": "out", "poem": poem, "by": opp, "hand": hand[opp]})
            n = send(t + 1.5, opp, 1)
            count[opp] -= n; count[o] += n
            scen = f"{opp} pushes out {o}'s card: sends {n}"
        elif s < 0.89:
            # 17-2 note, 25-4: unfavourable take: take from the opponent plus own otetsuki cancel.
            c = foul_card(opp, opp)
            if c is None:
                touch(t, opp, poem); n = send(t + 1.5, opp, 1); count[opp] -= n; count[o] += n
                scen = f"{opp} takes from {o}: sends {n}"
            else:
                touch(t, opp, poem); touch(t + 0.1, opp, c)
                scen = f"{opp} takes from {o} but touches own territory: nothing sent"
        else:
            # 23-1 by the owner's opponent on its own side, owner takes: owner sends 1.
            c = foul_card(opp, opp)
            touch(t, o, poem)
            if c is not None:
                touch(t + 0.05, opp, c)
                n = send(t + 1.5, o, 1)
                count[o] -= n; count[opp] += n
                scen = f"{o} takes own card, {opp} touched own territory: {o} sends {n}"
            else:
                scen = f"{o} takes own card"
    assert count["A"] == sum(1 for v in owner.values() if v == "A")
    assert count["B"] == sum(1 for v in owner.values() if v == "B")
    expected.append((seq, poem, count["A"], count["B"], scen))
    for pl in "AB":
        if count[pl] == 0:
            winner = pl

os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "layout.json"), "w") as f:
    json.dump(layout, f, indent=1, ensure_ascii=False); f.write("\n")
with open(os.path.join(out_dir, "readings.jsonl"), "w") as f:
    for r in readings: f.write(json.dumps(r) + "\n")
events.sort(key=lambda e: e["t_s"])
with open(os.path.join(out_dir, "events.jsonl"), "w") as f:
    for e in events: f.write(json.dumps(e) + "\n")
with open(os.path.join(os.path.dirname(__file__), "match100_expected.csv"), "w") as f:
    f.write("seq,poem,cards_a,cards_b,scenario\n")
    for row in expected: f.write(",".join(map(str, row[:4])) + "," + row[4] + "\n")
    f.write(f"winner,{winner}\n")
print("readings ruled:", len(expected), "winner:", winner, count)
