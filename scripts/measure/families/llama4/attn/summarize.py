#!/usr/bin/env python
"""Every number and formula check of NOTES.md, from the attn_probe.py rows (debug*.jsonl) and
vramfit's ledger on the same runs (ledger_check.txt).  Prints `ok` or `DIFF` beside each check.

Notation: T = batch*seq tokens, S = seq, H heads, K kv heads, d head_dim, h hidden,
dt = bytes of the model dtype (bf16 2, fp32 4; amp_bf16: q/k/v/o in bf16, dt_act = 2),
dt_e = bytes of the embedding output / residual stream (bf16 2, fp32 and amp 4).
"""
import json
import re

from extract_attn_ops import load, marks, live_at, replay_peak, events_between

CFG = {"tiny-llama4": "tiny-llama4.json", "tiny-llama-same-dims": "tiny-llama-same-dims.json",
       "tiny-llama4-e16": "tiny-llama4-e16.json", "tiny-llama4-d96": "tiny-llama4-d96.json",
       "tiny-llama-d96": "tiny-llama-d96.json", "tiny-llama4-noqknorm": "tiny-llama4-noqknorm.json"}
PAIR = {"tiny-llama4": "tiny-llama-same-dims", "tiny-llama4-d96": "tiny-llama-d96"}


def dims(row):
    c = json.load(open(CFG[row["model"]]))
    B, S = row["batch"], row["seq"]
    dt = {"bf16": 2, "fp32": 4, "amp_bf16": 2}[row["dtype"]]
    dt_e = {"bf16": 2, "fp32": 4, "amp_bf16": 4}[row["dtype"]]
    return dict(B=B, S=S, T=B * S, H=c["num_attention_heads"], K=c["num_key_value_heads"],
                d=c["head_dim"], h=c["hidden_size"], L=c["num_hidden_layers"], dt=dt, dt_e=dt_e,
                dt_w={"bf16": 2, "fp32": 4, "amp_bf16": 4}[row["dtype"]])


def rope_layers(row):
    # transformers 5.23 Llama4TextConfig: no_rope_layers[i] = int((i + 1) % 4 != 0) by default
    L = dims(row)["L"]
    return [i for i in range(L) if (i + 1) % 4 != 0], [i for i in range(L) if (i + 1) % 4 == 0]


def ok(a, b):
    return "ok" if a == b else f"DIFF ({a - b:+,})"


def R(x):   # RoPE + qk-norm layer, saved beyond plain Llama attention
    return 4 * x["T"] * (x["H"] + x["K"]) * x["d"] + 4 * x["T"] * (x["H"] + x["K"])


def N(x):   # NoPE layer with temperature tuning: attn_scales (S,) fp32
    return 4 * x["S"]


def G4(x):  # Llama 4's complex rotary table (1, S, d/2) complex64
    return 4 * x["S"] * x["d"]


def GL(x):  # plain Llama's cos and sin (1, S, d) in the embedding output's dtype
    return 2 * x["S"] * x["d"] * x["dt_e"]


def A(x):   # attention_states (o_proj output) held by Llama4TextDecoderLayer.forward to its return
    return x["T"] * x["h"] * x["dt"]


def ledger():
    out, cur = {}, None
    for line in open("ledger_check.txt"):
        m = re.match(r"== (\S+)\.json (\S+) b(\d+) s(\d+)", line)
        if m:
            cur = (m.group(1), m.group(2))
            out[cur] = {}
            continue
        m = re.match(r"it1 (Forward|Backward) allocated (\d+)", line)
        if m and cur:
            out[cur][m.group(1)] = int(m.group(2))
    return out


class Row:
    def __init__(self, row):
        self.row = row
        self.recs = [tuple(r) for r in row["debug_recs"]]
        self.M = marks(row)
        tm = row["tracker_marks"]
        self.f0, self.f1, self.b1 = tm["before_train"][1], tm["after_fwd1"][1], tm["after_bwd1"][1]
        self.x = dims(row)

    def attn_saved(self, l):
        a, b = self.M[("attn", l, "fwd_in")]["seq"], self.M[("attn", l, "fwd_out")]["seq"]
        return [r for r in self.recs if a < r[1] <= b and (r[2] is None or r[2] > self.f1)]

    def attn_held(self, l):
        a, b = self.M[("attn", l, "fwd_in")]["seq"], self.M[("attn", l, "fwd_out")]["seq"]
        fi, lo = self.M[("ff", l, "fwd_in")]["seq"], self.M[("layer", l, "fwd_out")]["seq"]
        return [r for r in self.recs if a < r[1] <= b and r[2] is not None and fi < r[2] <= lo]

    def tables(self):
        """rotary tables: made before layer 0, saved (alive at the end of the forward)"""
        l0 = self.M[("layer", 0, "fwd_in")]["seq"]
        return [r for r in self.recs if self.f0 < r[1] <= l0 and (r[2] is None or r[2] > self.f1)
                and ("complex64" in r[4] or "(1, " in r[4].split(":")[1])]

    def region(self, seq):
        for l in range(self.x["L"]):
            for part in ("attn", "ff", "layer"):
                a, b = self.M[(part, l, "fwd_in")]["seq"], self.M[(part, l, "fwd_out")]["seq"]
                if a < seq <= b:
                    return (part, l)
        return None

    def peak(self, ph):
        s0, s1 = (self.f0, self.f1) if ph == "fwd" else (self.f1, self.b1)
        (pk, sq), _ = replay_peak(self.recs, s0, s1)
        return pk, sq

    def attn_live_at(self, sq):
        """bytes alive at seq sq that the attention blocks allocated in fwd1 (saved + held)"""
        out = {}
        for r in live_at(self.recs, sq):
            if r[3] != "fwd1":
                continue
            g = self.region(r[1])
            if g and g[0] == "attn":
                out[g[1]] = out.get(g[1], 0) + r[0]
        return out

    def table_live_at(self, sq):
        return sum(r[0] for r in self.tables() if r[1] <= sq and (r[2] is None or r[2] > sq))


def fmt(n):
    return f"{n:,}"


def main():
    # plain Llama's attention saves 331,776 B per layer in this config (tiny-llama-same-dims bf16,
    # section 1), used for the E16 row (same attention dims as tiny-llama4)
    rows = {}
    for f in ("debug.jsonl", "debug_d96.jsonl", "debug_e16.jsonl", "debug_noqknorm.jsonl"):
        for r in load(f):
            rows[(r["model"], r["dtype"])] = Row(r)
    LED = ledger()
    print("# 1. saved for backward by each attention block (alive at the end of fwd1), Llama 4 vs plain Llama")
    for (m4, dtp), r4 in rows.items():
        if m4 not in PAIR:
            continue
        rl = rows[(PAIR[m4], dtp)]
        x = r4.x
        rope, nope = rope_layers(r4.row)
        print(f"\n{m4} {dtp}: T {x['T']} S {x['S']} H {x['H']} K {x['K']} d {x['d']} h {x['h']}")
        for l in range(x["L"]):
            s4 = sum(r[0] for r in r4.attn_saved(l))
            sl = sum(r[0] for r in rl.attn_saved(l))
            f = R(x) if l in rope else N(x)
            kind = "RoPE+qk-norm" if l in rope else "NoPE+temperature"
            print(f"  layer {l} {kind:<17} llama4 {fmt(s4):>10}  llama {fmt(sl):>10}  diff {fmt(s4 - sl):>9}  "
                  f"formula {'4T(H+K)d + 4T(H+K)' if l in rope else '4S'} = {fmt(f):>9}  {ok(s4 - sl, f)}")
        for l in range(x["L"]):
            hb = sum(r[0] for r in r4.attn_held(l))
            hl = sum(r[0] for r in rl.attn_held(l))
            print(f"  layer {l} held through the feed-forward block: llama4 {fmt(hb)} llama {fmt(hl)}  "
                  f"T*h*dt = {fmt(A(x))}  {ok(hb - hl, A(x))}")
        t4 = sum(r[0] for r in r4.tables())
        tl = sum(r[0] for r in rl.tables())
        print(f"  rotary tables saved: llama4 {fmt(t4)} (4*S*d = {fmt(G4(x))} {ok(t4, G4(x))}), "
              f"llama {fmt(tl)} (2*S*d*dt_e = {fmt(GL(x))} {ok(tl, GL(x))})")

    print("\n# 2. fwd1 peak: where, and the attention's bytes there (llama 4 minus plain llama)")
    for (m4, dtp), r4 in rows.items():
        if m4 not in PAIR:
            continue
        rl = rows[(PAIR[m4], dtp)]
        x = r4.x
        rope, nope = rope_layers(r4.row)
        p4, q4 = r4.peak("fwd")
        pl, ql = rl.peak("fwd")
        a4 = sum(r4.attn_live_at(q4).values()) + r4.table_live_at(q4)
        al = sum(rl.attn_live_at(ql).values()) + rl.table_live_at(ql)
        f = len(rope) * R(x) + len(nope) * N(x) + G4(x) - GL(x)
        print(f"  {m4} {dtp}: peak_fwd {fmt(p4)} at {r4.region(q4) or 'loss'}; llama {fmt(pl)} at {rl.region(ql) or 'loss'}; "
              f"attention+tables alive: {fmt(a4)} vs {fmt(al)}: diff {fmt(a4 - al)}; "
              f"3R + N + 4Sd - 2Sd*dt_e = {fmt(f)} {ok(a4 - al, f)}")
        led4, ledl = LED.get((m4, dtp), {}), LED.get((PAIR[m4], dtp), {})
        if "Forward" in led4:
            g4, gl = p4 - led4["Forward"], pl - ledl["Forward"]
            print(f"      ledger: llama4 {fmt(led4['Forward'])} (measured - ledger {fmt(g4)}), "
                  f"llama {fmt(ledl['Forward'])} (measured - ledger {fmt(gl)}); "
                  f"llama4 gap - llama gap = {fmt(g4 - gl)} {ok(g4 - gl, f)}")
        else:
            print("      ledger: Llama 4 under autocast refused (NotModelled)")
    # E16: forward peak inside the last layer's MoE block
    r4 = rows[("tiny-llama4-e16", "bf16")]
    x = r4.x
    p4, q4 = r4.peak("fwd")
    loss_seq = max(r[1] for r in r4.recs if r4.f0 < r[1] <= r4.f1)
    at_loss = sum(r[0] for r in live_at(r4.recs, loss_seq))
    live = r4.attn_live_at(q4)
    f = 3 * R(x) + N(x) + A(x)
    led = LED[("tiny-llama4-e16", "bf16")]["Forward"]
    print(f"  tiny-llama4-e16 bf16: peak_fwd {fmt(p4)} at {r4.region(q4)}; attention bytes alive there {fmt(sum(live.values()))} "
          f"(per layer {live}); beyond 4 plain-llama layers (4 x 331,776): {fmt(sum(live.values()) - 4 * 331_776)}; "
          f"3R + N + T*h*dt = {fmt(f)} {ok(sum(live.values()) - 4 * 331_776, f)}")
    print(f"      live at the loss {fmt(at_loss)}; ledger {fmt(led)}: loss - ledger = {fmt(at_loss - led)} "
          f"(3R + N = {fmt(3 * R(x) + N(x))} + 8, the 8 B every plain-llama row also has: {ok(at_loss - led, 3 * R(x) + N(x) + 8)}); "
          f"peak - loss = {fmt(p4 - at_loss)} = T*h*dt {fmt(A(x))} + MoE forward moment {fmt(p4 - at_loss - A(x))}")

    print("\n# 3. bwd1 peak: where, the attention's extra bytes alive there, the ledger")
    for (m4, dtp), r4 in rows.items():
        if not m4.startswith("tiny-llama4") or m4 == "tiny-llama4-noqknorm":
            continue
        x = r4.x
        rope, nope = rope_layers(r4.row)
        p4, q4 = r4.peak("bwd")
        prev = max((v for v in r4.row["attn_marks"] if v["phase"] == "bwd1" and v["seq"] <= q4), key=lambda v: v["seq"])
        live = r4.attn_live_at(q4)
        # layers whose attention backward has not run yet at the peak
        pending = sorted(live)
        extra = sum(R(x) if l in rope else N(x) for l in pending)
        tab = r4.table_live_at(q4)
        print(f"  {m4} {dtp}: peak_bwd {fmt(p4)} after marker {prev['part']}{prev['call']}.{prev['kind']}; "
              f"attention blocks still saved: layers {pending} ({fmt(sum(live.values()))} B), "
              f"of which beyond plain llama: {fmt(extra)}; rotary table alive {fmt(tab)} (plain llama's: {fmt(GL(x))})")
        led = LED.get((m4, dtp), {})
        if "Backward" in led:
            gap = p4 - led["Backward"]
            print(f"      ledger {fmt(led['Backward'])}: measured - ledger = {fmt(gap)} = attention {fmt(extra)} "
                  f"+ rest {fmt(gap - extra)} (not attention: the MoE backward moment of layer {min(pending) if pending else '?'})")
    for m, dtp in (("tiny-llama-same-dims", "bf16"), ("tiny-llama-same-dims", "fp32"), ("tiny-llama-d96", "bf16"), ("tiny-llama-d96", "fp32")):
        p, _ = rows[(m, dtp)].peak("bwd")
        print(f"  (plain {m} {dtp}: peak_bwd {fmt(p)}, ledger {fmt(LED[(m, dtp)]['Backward'])}, measured - ledger {fmt(p - LED[(m, dtp)]['Backward'])})")

    print("\n# 4. the attention's own transients (RoPE layer 1 and NoPE layer 3), llama 4 vs plain llama")
    for (m4, dtp), r4 in rows.items():
        if m4 not in PAIR:
            continue
        rl = rows[(PAIR[m4], dtp)]
        x = r4.x
        for l in (1, 3):
            res = []
            for rr in (r4, rl):
                a, b = rr.M[("attn", l, "fwd_in")]["seq"], rr.M[("attn", l, "fwd_out")]["seq"]
                cur, pk = 0, 0
                for seq, k, i in events_between(rr.recs, a, b):
                    cur += rr.recs[i][0] if k == "+" else -rr.recs[i][0]
                    pk = max(pk, cur)
                bs, be = rr.M[("attn", l, "bwd_start")]["seq"], rr.M[("attn", l, "bwd_end")]["seq"]
                saved = sum(r[0] for r in rr.attn_saved(l))
                cur, bpk, first_clone, mq = 0, 0, None, 0
                scales = [r for r in rr.attn_saved(l) if r[0] == 4 * x["S"] and "float32" in r[4]]
                stop = scales[0][2] if scales else None   # NoPE: up to the free of attn_scales
                for seq, k, i in events_between(rr.recs, bs, be):
                    cur += rr.recs[i][0] if k == "+" else -rr.recs[i][0]
                    if first_clone is None and k == "+" and rr.recs[i][4].startswith("aten.clone") and "complex64" in rr.recs[i][4]:
                        first_clone = seq
                    if first_clone is None and (stop is None or seq < stop):
                        mq = max(mq, cur)
                    bpk = max(bpk, cur)
                res.append((pk, bpk, saved, mq))
            (f4, b4, s4, mq4), (fl, bl, sl, _) = res
            line = (f"  {m4} {dtp} L{l}: fwd block max above entry {fmt(f4)} (llama {fmt(fl)}); "
                    f"bwd block max: above its start {fmt(b4)} (llama {fmt(bl)}), +saved = attention-owned {fmt(b4 + s4)} (llama {fmt(bl + sl)})")
            if l == 1 and dtp in ("bf16", "fp32"):
                Mq = x["h"] * x["H"] * x["d"] * x["dt"] + 2 * x["T"] * x["K"] * x["d"] * x["dt"] + 24 * x["T"] * x["H"] * x["d"]
                line += f"; q's L2-norm backward moment +saved {fmt(mq4 + s4)} vs h*H*d*dt + 2*T*K*d*dt + 24*T*H*d = {fmt(Mq)} {ok(mq4 + s4, Mq)}"
            if l == 1 and dtp == "bf16":
                Ff = x["T"] * (x["H"] + x["K"]) * x["d"] * (2 * x["dt"] + 8) + x["T"] * x["K"] * x["d"] * x["dt"]
                line += f"; fwd max vs T(H+K)d(2dt+8) + TKd*dt = {fmt(Ff)} {ok(f4, Ff)}"
            if l == 3 and dtp == "bf16":
                Mn = x["h"] * x["H"] * x["d"] * x["dt"] + 2 * x["T"] * x["K"] * x["d"] * x["dt"] + x["T"] * x["H"] * x["d"] * (8 + x["dt"]) + 4 * x["S"]
                line += f"; the product's backward moment +saved {fmt(mq4 + s4)} vs h*H*d*dt + 2*T*K*d*dt + T*H*d*(8+dt) + 4S = {fmt(Mn)} {ok(mq4 + s4, Mn)}"
            print(line)

    print("\n# 5. use_qk_norm false (tiny-llama4-noqknorm): the RoPE layers save what plain Llama saves")
    for dtp in ("bf16", "fp32"):
        r0, r1 = rows[("tiny-llama4-noqknorm", dtp)], rows[("tiny-llama4", dtp)]
        rl = rows[("tiny-llama-same-dims", dtp)]
        x = r0.x
        sv = [sum(r[0] for r in r0.attn_saved(l)) for l in range(4)]
        svl = [sum(r[0] for r in rl.attn_saved(l)) for l in range(4)]
        p0f, p1f = r0.peak("fwd")[0], r1.peak("fwd")[0]
        p0b, p1b = r0.peak("bwd")[0], r1.peak("bwd")[0]
        led = LED[("tiny-llama4-noqknorm", dtp)]
        print(f"  {dtp}: saved per layer {sv} (plain llama {svl}); peak_fwd {fmt(p0f)} = qk-norm row - 3R: {ok(p0f, p1f - 3 * R(x))}; "
              f"peak_bwd {fmt(p0b)} = qk-norm row - R: {ok(p0b, p1b - R(x))}; "
              f"ledger fwd gap {fmt(p0f - led['Forward'])} = N + 4Sd - 2Sd*dt_e + 8: {ok(p0f - led['Forward'], N(x) + G4(x) - GL(x) + 8)}; "
              f"ledger bwd gap {fmt(p0b - led['Backward'])}")


if __name__ == "__main__":
    main()
