//! Published bcrypt test vectors: OpenBSD/jBCrypt (JB), Openwall crypt_blowfish
//! (OW), the Rust, Python and Go bcrypt suites (RB) and a few edge cases (X).

pub(crate) struct Vector {
    pub(crate) password: &'static [u8],
    pub(crate) hash: &'static str,
}

const fn build<const N: usize>(block: &[u8], reps: usize, tail: &[u8]) -> [u8; N] {
    assert!(block.len() * reps + tail.len() == N);
    let mut out = [0u8; N];
    let mut i = 0;
    while i < reps {
        let mut j = 0;
        while j < block.len() {
            out[i * block.len() + j] = block[j];
            j += 1;
        }
        i += 1;
    }
    let mut k = 0;
    while k < tail.len() {
        out[block.len() * reps + k] = tail[k];
        k += 1;
    }
    out
}

/// #26: 72 × 0xAA, then a suffix past the 72-byte truncation point.
static PW26: [u8; 107] = build(b"\xaa", 72, b"chars after 72 are ignored as usual");
/// #27: `\xaa\x55` × 36 — exactly 72 bytes, high bytes.
static PW27: [u8; 72] = build(b"\xaa\x55", 36, b"");
/// #28: `\x55\xaa\xff` × 24 — exactly 72 bytes, contains 0xFF.
static PW28: [u8; 72] = build(b"\x55\xaa\xff", 24, b"");
/// #36: 100 × "x" — the pyca truncation vector.
static X100: [u8; 100] = build(b"x", 100, b"");
/// #42: "hunter2" × 10 + "ab" — exactly 72 bytes.
static PW42: [u8; 72] = build(b"hunter2", 10, b"ab");

/// The 42 positive vectors: every one must verify and be byte-exactly
/// reproducible from its parsed cost + salt. Numbered as in the survey.
pub(crate) static VECTORS: &[Vector] = &[
    Vector { password: b"", hash: "$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s." }, // #1  JB — empty password
    Vector { password: b"", hash: "$2a$08$HqWuK6/Ng6sg9gQzbLrgb.Tl.ZHfXLhvt/SgVyWhQqgqcZ7ZuUtye" }, // #2  JB
    Vector { password: b"", hash: "$2a$10$k1wbIrmNyFAPwPVPSVa/zecw2BCEnBwVS2GbrmgzxFUOqW9dk4TCW" }, // #3  JB
    Vector { password: b"", hash: "$2a$12$k42ZFHFWqBp3vWli.nIn8uYyIkbvYRvodzbfbK18SSsY.CsIQPlxO" }, // #4  JB — cost 12
    Vector { password: b"a", hash: "$2a$06$m0CrhHm10qJ3lXRY.5zDGO3rS2KdeeWLuGmsfGlMfOxih58VYVfxe" }, // #5  JB
    Vector { password: b"a", hash: "$2a$08$cfcvVd2aQ8CMvoMpP2EBfeodLEkkFJ9umNEfPD18.hUF62qqlC/V." }, // #6  JB
    Vector { password: b"a", hash: "$2a$10$k87L/MF28Q673VKh8/cPi.SUl7MU/rWuSiIDDFayrKk/1tBsSQu4u" }, // #7  JB
    Vector { password: b"a", hash: "$2a$12$8NJH3LsPrANStV6XtBakCez0cKHXVxmvxIlcz785vxAIZrihHZpeS" }, // #8  JB — cost 12
    Vector { password: b"abc", hash: "$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i" }, // #9  JB
    Vector { password: b"abc", hash: "$2a$08$Ro0CUfOqk6cXEKf3dyaM7OhSCvnwM9s4wIX9JeLapehKK5YdLxKcm" }, // #10 JB
    Vector { password: b"abc", hash: "$2a$10$WvvTPHKwdBJ3uk0Z37EMR.hLA2W6N9AEBhEgrAOljy2Ae5MtaSIUi" }, // #11 JB
    Vector { password: b"abc", hash: "$2a$12$EXRkfkdmXn2gzds2SSitu.MW9.gAVqa9eLS1//RYtYCmB1eLHg.9q" }, // #12 JB — cost 12
    Vector { password: b"abcdefghijklmnopqrstuvwxyz", hash: "$2a$06$.rCVZVOThsIa97pEDOxvGuRRgzG64bvtJ0938xuqzv18d3ZpQhstC" }, // #13 JB
    Vector { password: b"abcdefghijklmnopqrstuvwxyz", hash: "$2a$08$aTsUwsyowQuzRrDqFflhgekJ8d9/7Z3GV3UcgvzQW3J5zMyrTvlz." }, // #14 JB
    Vector { password: b"abcdefghijklmnopqrstuvwxyz", hash: "$2a$10$fVH8e28OQRj9tqiDXs1e1uxpsjN0c7II7YPKXua2NAKYvM6iQk7dq" }, // #15 JB
    Vector { password: b"abcdefghijklmnopqrstuvwxyz", hash: "$2a$12$D4G5f18o7aMMfwasBL7GpuQWuP3pkrZrOAnqP.bmezbMng.QwJ/pG" }, // #16 JB — cost 12
    Vector { password: b"~!@#$%^&*()      ~!@#$%^&*()PNBFRD", hash: "$2a$06$fPIsBO8qRqkjj273rfaOI.HtSV9jLDpTbZn782DC6/t7qT67P6FfO" }, // #17 JB — symbols/spaces
    Vector { password: b"~!@#$%^&*()      ~!@#$%^&*()PNBFRD", hash: "$2a$08$Eq2r4G/76Wv39MzSX262huzPz612MZiYHVUJe/OcOql2jo4.9UxTW" }, // #18 JB
    Vector { password: b"~!@#$%^&*()      ~!@#$%^&*()PNBFRD", hash: "$2a$10$LgfYWkbzEvQ4JakH7rOvHe0y8pHKF9OaFgwUZ2q7W2FFZmZzJYlfS" }, // #19 JB
    Vector { password: b"~!@#$%^&*()      ~!@#$%^&*()PNBFRD", hash: "$2a$12$WApznUOJfkEGSmYRfnkrPOr466oFDCaj4b6HY3EXGvfxm43seyhgC" }, // #20 JB — cost 12
    Vector { password: b"U*U", hash: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW" }, // #21 OW
    Vector { password: b"U*U*", hash: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK" }, // #22 OW
    Vector { password: b"U*U*U", hash: "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a" }, // #23 OW
    Vector { password: b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored", hash: "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui" }, // #24 OW — >72 bytes, truncation
    Vector { password: b"", hash: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy" }, // #25 OW — empty password
    Vector { password: &PW26, hash: "$2a$05$/OK.fbVrR/bpIqNJ5ianF.swQOIzjOiJ9GHEPuhEkvqrUyvWhEMx6" }, // #26 OW — 72×0xAA + truncation
    Vector { password: &PW27, hash: "$2a$05$/OK.fbVrR/bpIqNJ5ianF.R9xrDjiycxMbQE2bp.vgqlYpW5wx2yy" }, // #27 OW — 72-byte edge, high bytes
    Vector { password: &PW28, hash: "$2a$05$/OK.fbVrR/bpIqNJ5ianF.9tQZzcJfm3uj2NvJ/n5xkhpqLrMpWCe" }, // #28 OW — 72-byte edge, 0xFF bytes
    Vector { password: b"\xff\xff\xa3", hash: "$2b$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e" }, // #29 OW — $2b$, 0xFF bytes
    Vector { password: b"\xff\xff\xa3", hash: "$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e" }, // #30 OW — $2y$ == $2b$
    Vector { password: b"\xa3", hash: "$2a$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq" }, // #31 OW — 8-bit, correct alg
    Vector { password: b"\xa3", hash: "$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq" }, // #32 OW — $2y$ == $2a$ here
    Vector { password: b"\xff\xa334\xff\xff\xff\xa3345", hash: "$2y$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi" }, // #33 OW — $2y$ only: crypt_blowfish gives this input another $2a$ hash (its 8-bit bug emulation), which neither crate reproduces
    Vector { password: b"hunter2", hash: "$2b$12$......................21jzCB1r6pN6rp5O2Ev0ejjTAboskKm" }, // #34 RB — cost 12, zero salt
    Vector { password: b"My S3cre7 P@55w0rd!", hash: "$2b$05$HlFShUxTu4ZHHfOLJwfmCeDj/kuKFKboanXtDJXxCC7aIPTUgxNDe" }, // #35 RB — hash_with_salt
    Vector { password: &X100, hash: "$2a$05$......................YgIDy4hFBdVlc/6LHnD9mX488r9cLd2" }, // #36 RB — truncation (pyca)
    Vector { password: b"correctbatteryhorsestapler", hash: "$2b$04$EGdrhbKUv8Oc9vGiXX0HQOxSg445d458Muh7DAHskb6QbtCvdxcie" }, // #37 RB — cost 4, pyca
    Vector { password: b"correctbatteryhorsestapler", hash: "$2a$04$n4Uy0eSnMfvnESYL.bLwuuj0U/ETSsoTpRT9GVk5bektyVVa5xnIi" }, // #38 RB — node
    Vector { password: b"\x1d\xe1\xc3\xa7\xdf\xec\x55\xc3\x72\xe3\x07\x00\xd1\xef\xbd\x18\x33\x69\x7c\xa8\x97\x4b\x90\x40\xc6\xc5\xc4\x04\xf1\x61\x6e\x87", hash: "$2a$04$tjARW6ZON3PhrAIRW2LG/u9aDw5eFdstYLR8nFCNaOQmsH9XD23w." }, // #39 RB — high bytes, Go x/crypto
    Vector { password: "★★★★★★★★".as_bytes(), hash: "$2a$05$......................CVh3qAKQwo3AyWm2sH24x.4W0jOiobK" }, // #40 X — UTF-8 (U+2605 ×8 = 24 bytes)
    Vector { password: "★★★★★★★★".as_bytes(), hash: "$2b$05$CCCCCCCCCCCCCCCCCCCCC.GKRlRE2yXEq.CPNmj6AdW2OEOSzU/GW" }, // #41 X — UTF-8, $2b$
    Vector { password: &PW42, hash: "$2a$05$......................VbcD.3tcy/UErGUKxMqc6T88xuK4rWq" }, // #42 X — 72-char ASCII edge
];
