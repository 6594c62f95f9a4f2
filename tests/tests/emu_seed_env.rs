//! `WARPSAFE_EMU_SEED` sets the default seed and makes `for_each_seed` replay that seed
//! only. (Its own test binary: it sets an environment variable.)

use warpsafe::emu::{for_each_seed, Options, SEED_ENV};

#[test]
fn the_environment_seed_replays_one_run() {
    std::env::set_var(SEED_ENV, "17");
    assert_eq!(Options::default().seed, 17);
    let mut seeds = Vec::new();
    for_each_seed(0..100, |options| {
        seeds.push(options.seed);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seeds, [17]);

    std::env::set_var(SEED_ENV, "not a number");
    assert_eq!(Options::default().seed, 0);
    std::env::remove_var(SEED_ENV);
    let mut runs = 0;
    for_each_seed(5..9, |_| {
        runs += 1;
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs, 4);
}
