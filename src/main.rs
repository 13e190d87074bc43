//! The `karuta-referee` binary: parses flags and hands each subcommand to the library.

use clap::{Parser, Subcommand};
use karuta_referee::cli;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "karuta-referee",
    version,
    about = "Referees competitive karuta from an overhead camera"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The kimari-ji of every unread poem: poem, kimari-ji, length.
    Kimariji {
        /// Poems already read, comma-separated (e.g. 74,64).
        #[arg(long, value_delimiter = ',')]
        read: Vec<u8>,
    },
    /// Rulings for a whole match (decisions.jsonl) on stdout, then the result line.
    Adjudicate {
        #[arg(long)]
        layout: PathBuf,
        #[arg(long)]
        readings: PathBuf,
        #[arg(long)]
        events: PathBuf,
    },
    /// Camera intrinsics and distortion from views of the ChArUco board -> calibration.json;
    /// or, with --draw-board, the printable board image.
    Calibrate {
        /// The board's spec (calibration/board.json).
        #[arg(long)]
        board: PathBuf,
        /// A video of the board moved and tilted in front of the camera.
        #[arg(long, conflicts_with = "images")]
        video: Option<PathBuf>,
        /// A folder of still images of the board.
        #[arg(long)]
        images: Option<PathBuf>,
        #[arg(long, default_value = "calibration.json")]
        out: PathBuf,
        /// Write the printable board image (PNG) instead of calibrating.
        #[arg(long, conflicts_with_all = ["video", "images"])]
        draw_board: Option<PathBuf>,
        /// Print resolution for --draw-board.
        #[arg(long, default_value_t = 300.0)]
        dpi: f64,
    },
    /// The field frame from four corner markers in an image or from card quads (JSON),
    /// written into calibration.json; with cards, the measured layout and its check.
    Register {
        /// Intrinsics and distortion (calibration.json from `calibrate`).
        #[arg(long)]
        calibration: Option<PathBuf>,
        #[arg(long, conflicts_with = "cards")]
        markers: Option<PathBuf>,
        #[arg(long)]
        cards: Option<PathBuf>,
        #[arg(long, default_value = "calibration.json")]
        out: PathBuf,
        /// Write the measured layout (cards only).
        #[arg(long)]
        layout: Option<PathBuf>,
    },
    /// The card layout measured from a recording's video alone: writes layout.json and
    /// the image_to_field of calibration.json, prints the layout check.
    Layout {
        /// The recording directory (video.*, optional calibration.json intrinsics and
        /// readings.jsonl; layout.json and truth files there are ignored).
        dir: PathBuf,
        /// Where to write layout.json and calibration.json (default: DIR).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Rulings from a recording's video and readings: OUT/layout.json, OUT/events.jsonl,
    /// OUT/decisions.jsonl (written under .part names until complete).
    Analyze {
        /// The recording directory (video.*, readings.jsonl, optional frames.csv and the
        /// lens part of calibration.json).
        dir: PathBuf,
        /// Where to write (default: DIR/analysis).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Continue a run that was killed, from its last ruling.
        #[arg(long)]
        resume: bool,
        /// The hand model; without the file the run goes on without hands and every
        /// ruling that rests on them is marked for review.
        #[arg(long, default_value = "models/hands.onnx")]
        hands_model: PathBuf,
        /// Hands from the simulator's labels instead of a model (measures the rest of
        /// the pipeline on simulated recordings only).
        #[arg(long)]
        hands_labels: bool,
        /// Skip the review page (OUT/report.html and its evidence).
        #[arg(long)]
        no_report: bool,
        /// Also write the hand model's own output to this directory, as `perceive`
        /// does (hands.jsonl, events.jsonl), with the cards pressed where the card
        /// tracker placed them: `score-hands` scores it.
        #[arg(long, conflicts_with_all = ["resume", "hands_labels"])]
        hands_out: Option<PathBuf>,
        /// The engine that runs the hand model (ort: built with `--features ort`).
        #[arg(long, value_enum, default_value_t)]
        backend: karuta_referee::hands::Backend,
        /// Threads for the hand network (ONNX Runtime's intra-op threads, tract's matrix
        /// products).
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// Rulings printed as they are made, from a video played at its own pace or a camera.
    Live {
        #[arg(long, conflicts_with = "camera")]
        video: Option<PathBuf>,
        #[arg(long)]
        camera: Option<i32>,
        /// Release the video's frames at the recording's rate.
        #[arg(long)]
        realtime: bool,
        /// The reader's timeline, read as lines are appended; `-` for stdin.
        #[arg(long)]
        readings: Option<String>,
        /// The lens part of calibration.json.
        #[arg(long)]
        calibration: Option<PathBuf>,
        /// A layout.json whose `players` block declares the players' lead hands (its
        /// cards are not read: they are measured from the video).
        #[arg(long)]
        layout: Option<PathBuf>,
        #[arg(long, default_value = "models/hands.onnx")]
        hands_model: PathBuf,
        /// Write, per frame, when each stage took it and was done with it (CSV, ms after
        /// the frame's release; with --realtime or a camera).
        #[arg(long)]
        stage_times: Option<PathBuf>,
        /// The engine that runs the hand model (ort: built with `--features ort`).
        #[arg(long, value_enum, default_value_t)]
        backend: karuta_referee::hands::Backend,
        /// Threads for the hand network (ONNX Runtime's intra-op threads, tract's matrix
        /// products).
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// An analysis scored against a simulated recording's truth, as JSON (OUT/score.json).
    Score {
        #[arg(long)]
        truth: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Print each ruling beside the truth, for people, instead of the JSON.
        #[arg(long)]
        table: bool,
    },
    /// The hands of a recording seen by the hand model, frame by frame (OUT/hands.jsonl),
    /// and the touch, enter and leave events they make (OUT/events.jsonl).
    Perceive {
        /// The recording directory (video.*, calibration.json, layout.json; the layout is
        /// measured from the video when the directory has none).
        dir: PathBuf,
        /// Where to write events.jsonl and hands.jsonl (default: DIR).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The hand model (ONNX).
        #[arg(long, default_value = karuta_referee::hands::DEFAULT_MODEL)]
        model: PathBuf,
        /// The engine that runs it.
        #[arg(long, value_enum, default_value_t)]
        backend: karuta_referee::hands::Backend,
        /// Seconds between runs of the network while no hand is over the field.
        #[arg(long, default_value_t = karuta_referee::hands::perceive::IDLE_EVERY_S)]
        idle_every_s: f64,
        /// Seconds between runs while a hand is over the field.
        #[arg(long, default_value_t = karuta_referee::hands::perceive::ACTIVE_EVERY_S)]
        active_every_s: f64,
        /// Threads for the hand network (ONNX Runtime's intra-op threads, tract's matrix
        /// products).
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// Hands and events written by `perceive` (OUT) against a simulated recording's
    /// labels and truth (DIR), as JSON.
    ScoreHands {
        #[arg(long)]
        truth: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// A simulated recording directory with exact truth (video, readings, layout,
    /// calibration, truth events and rulings, optional per-frame labels).
    Simulate {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 240.0)]
        fps: f64,
        /// WIDTHxHEIGHT in pixels.
        #[arg(long, default_value = "1280x720")]
        size: String,
        #[arg(long, default_value_t = 10)]
        readings: usize,
        #[arg(long, value_enum, default_value_t = karuta_referee::sim::Preset::Realistic)]
        preset: karuta_referee::sim::Preset,
        /// Also write per-frame training labels under OUT/labels.
        #[arg(long)]
        labels: bool,
        /// Territory width as laid out (rules: 870 mm).
        #[arg(long, default_value_t = 870.0)]
        territory_mm: f64,
        /// Gap between the territories as laid out (rules: 30 mm).
        #[arg(long, default_value_t = 30.0)]
        gap_mm: f64,
        /// Draw the card texts in this font file (.ttf/.otf/.ttc) instead of the seed's.
        #[arg(long)]
        card_font: Option<PathBuf>,
        /// Set the card texts' columns stepped or level instead of the default (stepped).
        #[arg(long, value_enum)]
        card_columns: Option<karuta_referee::sim::look::CardColumns>,
        /// Print the card texts with dakuten.
        #[arg(long)]
        card_dakuten: bool,
        /// Make every reading a card on the field that both players touch 0-20 ms apart
        /// (training data for timing close takes); no dead cards.
        #[arg(long)]
        close_takes: bool,
    },
    /// The review page of a recording (OUT/report.html with every ruling's evidence) from
    /// existing rulings; by default the recording's own truth files.
    Report {
        /// The recording directory (video.*, layout.json, readings.jsonl, calibration.json).
        #[arg(long)]
        dir: PathBuf,
        /// Where to write report.html, review.json and evidence/.
        #[arg(long)]
        out: PathBuf,
        /// Rulings (default DIR/truth_decisions.jsonl).
        #[arg(long)]
        decisions: Option<PathBuf>,
        /// Events (default DIR/truth.jsonl).
        #[arg(long)]
        events: Option<PathBuf>,
        #[arg(long)]
        layout: Option<PathBuf>,
        #[arg(long)]
        readings: Option<PathBuf>,
        #[arg(long)]
        calibration: Option<PathBuf>,
        /// Hand observations (default DIR/labels/frames.jsonl when present).
        #[arg(long)]
        hands: Option<PathBuf>,
        /// The video (default DIR/video.*).
        #[arg(long)]
        video: Option<PathBuf>,
        /// A page without frames (no video needed).
        #[arg(long, conflicts_with = "video")]
        no_video: bool,
        /// Also write OUT/annotated.mp4, the whole match annotated.
        #[arg(long)]
        annotate: bool,
    },
    /// One ruling of a report in the terminal, with the paths of its clip and strip.
    Review {
        /// The report's folder (the OUT of `report` or `analyze`).
        out: PathBuf,
        #[arg(long)]
        seq: u32,
    },
    /// The reader's timeline heard in the video's sound track alone -> readings.jsonl.
    Readings {
        /// The recording directory (video.*).
        dir: PathBuf,
        /// Where to write readings.jsonl (default: DIR).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The reader's voice and the hall's sounds added to a recording's video, following
    /// its readings.jsonl; writes OUT/video.mp4 (video stream copied) and OUT/sound_truth.json.
    Dub {
        /// The recording directory (video.*, readings.jsonl).
        dir: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// espeak-a|b|c (tuning), espeak-held, espeak:VARIANT:PITCH:WPM or dir:FOLDER.
        #[arg(long, default_value = "espeak-a")]
        voice: String,
        #[arg(long, value_enum, default_value_t = karuta_referee::audio::NoiseLevel::Moderate)]
        noise: karuta_referee::audio::NoiseLevel,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where synthesized kana are cached (default: data/audio-cache).
        #[arg(long)]
        cache: Option<PathBuf>,
    },
    /// Heard readings against a dubbed recording's sound_truth.json (one JSON line).
    ScoreReadings {
        /// The dubbed recording (sound_truth.json).
        dir: PathBuf,
        /// The heard readings.jsonl (default: DIR/readings.jsonl).
        #[arg(long)]
        heard: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // FFmpeg's process-wide settings, before any thread starts.
    karuta_referee::capture::init_process();
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                cli::EXIT_BAD_INPUT as u8
            } else {
                0
            });
        }
    };
    let mut stdout = std::io::stdout().lock();
    let outcome = match args.command {
        Command::Kimariji { read } => cli::kimariji(&read, &mut stdout),
        Command::Analyze {
            dir,
            out,
            resume,
            hands_model,
            hands_labels,
            no_report,
            hands_out,
            backend,
            threads,
        } => {
            let hands = if hands_labels {
                cli::analyze::HandsChoice::Labels
            } else {
                cli::analyze::HandsChoice::Model {
                    path: hands_model,
                    backend,
                    threads,
                    record: hands_out,
                }
            };
            cli::analyze::analyze(
                &dir,
                out.as_deref(),
                resume,
                &hands,
                !no_report,
                &mut stdout,
            )
        }
        Command::Live {
            video,
            camera,
            realtime,
            readings,
            calibration,
            layout,
            hands_model,
            stage_times,
            backend,
            threads,
        } => cli::live::live(
            &cli::live::LiveArgs {
                video,
                camera,
                realtime,
                readings,
                calibration,
                layout,
                hands: cli::analyze::HandsChoice::Model {
                    path: hands_model,
                    backend,
                    threads,
                    record: None,
                },
                stage_times,
            },
            &mut stdout,
        ),
        Command::Score { truth, out, table } => {
            if table {
                cli::score::table(&truth, &out, &mut stdout)
            } else {
                cli::score::score(&truth, &out, &mut stdout)
            }
        }
        Command::Adjudicate {
            layout,
            readings,
            events,
        } => cli::adjudicate(&layout, &readings, &events, &mut stdout),
        Command::Calibrate {
            board,
            video,
            images,
            out,
            draw_board,
            dpi,
        } => match (draw_board, video, images) {
            (Some(png), _, _) => cli::field::draw_board(&board, &png, dpi, &mut stdout),
            (None, Some(v), _) => {
                cli::field::calibrate(&board, cli::field::Views::Video(&v), &out, &mut stdout)
            }
            (None, None, Some(d)) => {
                cli::field::calibrate(&board, cli::field::Views::Images(&d), &out, &mut stdout)
            }
            (None, None, None) => Err(karuta_referee::rules::InputError::new(
                "calibrate",
                "arguments",
                "give --video V or --images DIR (or --draw-board PNG)",
            )
            .into()),
        },
        Command::Layout { dir, out } => cli::layout::layout(&dir, out.as_deref(), &mut stdout),
        Command::Perceive {
            dir,
            out,
            model,
            backend,
            idle_every_s,
            active_every_s,
            threads,
        } => {
            let opts = karuta_referee::hands::PerceiveOptions {
                idle_every_s,
                active_every_s,
                backend,
                threads,
            };
            cli::perceive::perceive(&dir, out.as_deref(), &model, &opts, &mut stdout).map(|_| ())
        }
        Command::ScoreHands { truth, out } => cli::perceive::score_hands(&truth, &out, &mut stdout),
        Command::Register {
            calibration,
            markers,
            cards,
            out,
            layout,
        } => {
            let source = match (&markers, &cards) {
                (Some(m), _) => Some(cli::field::FieldSource::Markers(m)),
                (None, Some(c)) => Some(cli::field::FieldSource::Cards(c)),
                (None, None) => None,
            };
            match source {
                Some(s) => cli::field::register(
                    calibration.as_deref(),
                    s,
                    &out,
                    layout.as_deref(),
                    &mut stdout,
                ),
                None => Err(karuta_referee::rules::InputError::new(
                    "register",
                    "arguments",
                    "give --markers IMAGE or --cards QUADS.json",
                )
                .into()),
            }
        }
        Command::Simulate {
            seed,
            out,
            fps,
            size,
            readings,
            preset,
            labels,
            territory_mm,
            gap_mm,
            card_font,
            card_columns,
            card_dakuten,
            close_takes,
        } => cli::simulate::simulate(
            &cli::simulate::SimulateArgs {
                seed,
                fps,
                size,
                readings,
                preset,
                labels,
                territory_mm,
                gap_mm,
                card_font,
                card_columns,
                card_dakuten,
                close_takes,
            },
            &out,
            &mut stdout,
        ),
        Command::Readings { dir, out } => {
            cli::readings::readings(&dir, out.as_deref(), &mut stdout)
        }
        Command::ScoreReadings { dir, heard } => {
            cli::readings::score_readings(&dir, heard.as_deref(), &mut stdout)
        }
        Command::Dub {
            dir,
            out,
            voice,
            noise,
            seed,
            cache,
        } => cli::readings::dub(
            &dir,
            &out,
            &cli::readings::DubArgs {
                voice,
                noise,
                seed,
                cache,
            },
            &mut stdout,
        ),
        Command::Report {
            dir,
            out,
            decisions,
            events,
            layout,
            readings,
            calibration,
            hands,
            video,
            no_video,
            annotate,
        } => cli::report::report(
            &cli::report::ReportArgs {
                dir,
                out,
                decisions,
                events,
                layout,
                readings,
                calibration,
                hands,
                video,
                no_video,
                annotate,
            },
            &mut stdout,
        ),
        Command::Review { out, seq } => cli::review::review(&out, seq, &mut stdout),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("karuta-referee: {}", cli::error_line(&e));
            ExitCode::from(if cli::is_bad_input(&e) {
                cli::EXIT_BAD_INPUT
            } else {
                cli::EXIT_INTERNAL
            } as u8)
        }
    }
}
