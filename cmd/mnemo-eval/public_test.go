package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

// The peers' way of scoring: R@k is the share of a question's relevant
// items among the first k distinct items of its ranking; the reciprocal
// rank is the first relevant one's within 10; a question with nothing to
// find counts and scores 0; quiet counts the empty rankings.
func TestGradedScoresAsThePeers(t *testing.T) {
	var g graded
	want := func(keys ...string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	g.add(want("S1", "S3"), []string{"S2", "S1", "S1", "S4", "S5", "S6", "S3"}) // S3 is 6th distinct
	g.add(want("S1"), []string{"S1"})
	g.add(want(), []string{"S1"})
	g.add(want("S9"), nil)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(g.Recall5(), (0.5+1)/4) || !near(g.Recall10(), (1+1)/4.0) || !near(g.Recall1(), 1/4.0) {
		t.Errorf("R@1 %v, R@5 %v, R@10 %v; want 0.25, 0.375, 0.5", g.Recall1(), g.Recall5(), g.Recall10())
	}
	if !near(g.MRR(), (0.5+1)/4) || !near(g.Quiet(), 0.25) {
		t.Errorf("MRR %v, quiet %v; want 0.375, 0.25", g.MRR(), g.Quiet())
	}
}

// A conversation in LoCoMo's format (written here, not LoCoMo's text):
// its sessions in order whatever the order of the keys, their dates, and
// the evidence as the data writes it, several ids in one string, a
// leading zero, a malformed id left out.
const sampleLocomo = `{
 "speaker_a": "Ada", "speaker_b": "Bo",
 "session_2_date_time": "9:05 am on 3 March, 2024",
 "session_2": [
  {"speaker": "Bo", "dia_id": "D2:1", "text": "We finally adopted a grey greyhound called Pixel from the shelter."},
  {"speaker": "Ada", "dia_id": "D2:2", "text": "Congratulations! How is Pixel settling in?"}
 ],
 "session_1_date_time": "1:56 pm on 8 May, 2023",
 "session_1": [
  {"speaker": "Ada", "dia_id": "D1:1", "text": "I started pottery classes on Tuesday evenings at the community centre."},
  {"speaker": "Bo", "dia_id": "D1:2", "text": "That sounds lovely. I am training for a half marathon in October.", "img_url": ["x"], "blip_caption": "a photo of running shoes"},
  {"speaker": "Ada", "dia_id": "D1:3", "text": "ok"}
 ],
 "session_3_date_time": "4:10 pm on 26 October, 2024",
 "qa": [
  {"question": "What classes did Ada start?", "answer": "pottery", "evidence": ["D1:1"], "category": 4},
  {"question": "What did Bo adopt and what is Bo training for?", "answer": "x", "evidence": ["D2:1; D1:02"], "category": 1},
  {"question": "What did Ada adopt?", "adversarial_answer": "a greyhound", "evidence": ["D2:1", "D:11:26"], "category": 5},
  {"question": "Would Ada like clay?", "answer": "yes", "evidence": [], "category": 3}
 ]
}`

func TestParseLocomo(t *testing.T) {
	c, err := parseLocomo("7", []byte(sampleLocomo))
	if err != nil {
		t.Fatal(err)
	}
	if c.Speakers != [2]string{"Ada", "Bo"} || len(c.Sessions) != 2 || c.Sessions[0].N != 1 || c.Sessions[1].N != 2 {
		t.Fatalf("speakers %v, sessions %+v; want Ada and Bo, sessions 1 and 2 (a date without turns is no session)", c.Speakers, c.Sessions)
	}
	if d := c.Sessions[0].Date; d.Year() != 2023 || d.Month() != 5 || d.Day() != 8 || d.Hour() != 13 || d.Minute() != 56 {
		t.Errorf("session 1's date %v, want 2023-05-08 13:56", d)
	}
	if p := c.Sessions[0].Turns[1].prompt(); p != "Bo: That sounds lovely. I am training for a half marathon in October." {
		t.Errorf("a turn's prompt %q: the speaker and the words, no photo", p)
	}
	wantEv := [][]string{{"D1:1"}, {"D2:1", "D1:2"}, {"D2:1"}, nil}
	wantSess := [][]string{{"S1"}, {"S2", "S1"}, {"S2"}, nil}
	for i, q := range c.Questions {
		if !slices.Equal(q.Evidence, wantEv[i]) || !slices.Equal(q.Sessions, wantSess[i]) {
			t.Errorf("question %d: evidence %v in %v, want %v in %v", i+1, q.Evidence, q.Sessions, wantEv[i], wantSess[i])
		}
	}
	if _, err := parseLocomo("8", []byte(`{"speaker_a":"A","speaker_b":"B","session_1":[],"session_1_date_time":"yesterday","qa":[]}`)); err == nil || !strings.Contains(err.Error(), "session_1_date_time") {
		t.Errorf("a date that does not parse: %v, want an error naming it", err)
	}
}

// LoCoMo's zip is read whole: every conversation, in the order of their
// names; replayed, each turn is a prompt of its dated session, and what
// a turn said is found in its session.
func TestReplayLocomoFindsWhatWasSaid(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("data/multimodal_dialog/locomo10_v2/7.json")
	if err == nil {
		_, err = f.Write([]byte(sampleLocomo))
	}
	if err == nil {
		err = zw.Close()
	}
	file := filepath.Join(t.TempDir(), "locomo10.zip")
	if err == nil {
		err = os.WriteFile(file, buf.Bytes(), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	convs, err := LoadLocomo(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lm, err := replayLocomo(ctx, convs, vector.NewHashEmbedder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.mem.Close()
	if lm.records != 4 {
		t.Errorf("%d records, want one a turn but the turn of a word (4)", lm.records)
	}
	c := &convs[0]
	turns, err := lm.turnsOf(ctx, c, "pottery classes on Tuesday evenings", "hybrid", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) == 0 || turns[0] != "D1:1" {
		t.Errorf("turns %v, want D1:1 first", turns)
	}
	r := newLocomoResult()
	r.add(&c.Questions[0], turns)
	if m := r.session["single-hop"]; m.n != 1 || m.Recall5() != 1 || m.MRR() != 1 {
		t.Errorf("single-hop: n %v, R@5 %v, MRR %v; want 1, 1, 1", m.n, m.Recall5(), m.MRR())
	}
}

// Without the benchmarks folder beside the checkout the public
// benchmarks are skipped, each with a note saying where it looked.
func TestPublicBenchmarksSkipWhenAbsent(t *testing.T) {
	var out bytes.Buffer
	dir := filepath.Join(t.TempDir(), "nowhere")
	if err := runPublic(context.Background(), &out, &out, dir, "locomo,devbench", "", []vector.Embedder{vector.NewHashEmbedder()}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LoCoMo skipped: " + locomoFile(dir) + " is not there", "DevBench skipped: " + devBenchFile(dir) + " is not there"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out.String(), want)
		}
	}
	if err := runPublic(context.Background(), &out, &out, dir, "longmemeval", "", nil); err == nil {
		t.Error("an unknown benchmark: no error")
	}
}

// benchmarksDir is the public benchmarks' folder beside the checkout, as
// `just eval` finds it; tests that need it skip, saying so, without it.
func benchmarksDir(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "shared", "benchmarks")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the public benchmarks are not beside the checkout (%s): %v", dir, err)
	}
	return dir
}

// The data as the peers read it: LoCoMo's 10 conversations, 5,882 turns
// and 1,986 questions by category; DevBench's 30 memories and 20
// questions, 5 without an answer.
func TestPublicBenchmarksLoad(t *testing.T) {
	dir := benchmarksDir(t)
	convs, err := LoadLocomo(locomoFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	turns, byCat := 0, map[int]int{}
	for _, c := range convs {
		for _, s := range c.Sessions {
			turns += len(s.Turns)
		}
		for _, q := range c.Questions {
			byCat[q.Category]++
		}
	}
	want := map[int]int{1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
	if len(convs) != 10 || turns != 5882 || !maps.Equal(byCat, want) {
		t.Errorf("LoCoMo: %d conversations, %d turns, questions by category %v; want 10, 5882, %v", len(convs), turns, byCat, want)
	}
	d, err := LoadDevBench(devBenchFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Memories) != 30 || len(d.Queries) != 20 || countNegative(d) != 5 {
		t.Errorf("DevBench: %d memories, %d questions, %d negative; want 30, 20, 5", len(d.Memories), len(d.Queries), countNegative(d))
	}
	var bad DevBench
	_ = json.Unmarshal([]byte(`{"memories":[{"id":"a","content":"x"}],"queries":[{"id":"q","category":"exact","question":"?","expected_tags":["b"]}]}`), &bad)
	file := filepath.Join(t.TempDir(), "d.json")
	b, _ := json.Marshal(bad)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDevBench(file); err == nil || !strings.Contains(err.Error(), `expects "b"`) {
		t.Errorf("a question expecting a memory that is not there: %v", err)
	}
}
