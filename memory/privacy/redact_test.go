package privacy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory/internal/cputime"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// The secrets below are made up, and assembled from pieces so that no
// scanner mistakes this file for a leak.
var (
	awsKeyID     = "AK" + "IA" + "IOSFODNN7EXAMPLE"
	awsSTSKeyID  = "AS" + "IA" + "Y34FZKBOKMUTVV7A"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
	openaiKey    = "sk" + "-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6h"
	openaiLegacy = "sk" + "-" + "T3BlbkFJ" + strings.Repeat("a1B2", 10)
	anthropicKey = "sk" + "-ant-" + "api03-" + strings.Repeat("Xy9_", 20) + "AA"
	githubToken  = "gh" + "p_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	githubPAT    = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
	slackToken   = "xo" + "xb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	googleKey    = "AI" + "za" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"
	jwt          = "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0" + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBody      = "MIIEpAIBAAKCAQEA7bq\nZm9vYmFy\n"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"aws access key id", "key " + awsKeyID + " end", "key [REDACTED:aws-access-key] end"},
		{"aws session key id", "id=" + awsSTSKeyID, "id=[REDACTED:aws-access-key]"},
		{"aws secret", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = [REDACTED:aws-secret]"},
		{"aws secret env", "export AWS_SECRET_ACCESS_KEY=" + awsSecret + "\n", "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret]\n"},
		{"openai key", "OPENAI=" + openaiKey, "OPENAI=[REDACTED:openai-key]"},
		{"openai legacy key", "key: " + openaiLegacy + ".", "key: [REDACTED:openai-key]."},
		{"anthropic key", `"` + anthropicKey + `"`, `"[REDACTED:anthropic-key]"`},
		{"github token", "git clone https://" + githubToken + "@github.com/x/y", "git clone https://[REDACTED:github-token]@github.com/x/y"},
		{"github oauth token", "gh" + "o_" + githubToken[4:], "[REDACTED:github-token]"},
		{"github user token", "gh" + "u_" + githubToken[4:], "[REDACTED:github-token]"},
		{"github server token", "gh" + "s_" + githubToken[4:], "[REDACTED:github-token]"},
		{"github refresh token", "gh" + "r_" + githubToken[4:], "[REDACTED:github-token]"},
		{"github fine-grained token", "(" + githubPAT + ")", "([REDACTED:github-token])"},
		{"slack token", "SLACK " + slackToken, "SLACK [REDACTED:slack-token]"},
		{"slack user token", "xo" + "xp-" + slackToken[5:], "[REDACTED:slack-token]"},
		{"google api key", "?key=" + googleKey + "&q=1", "?key=[REDACTED:google-api-key]&q=1"},
		{"authorization header", "Authorization: Bearer abcDEF123456.ghi-jkl", "Authorization: Bearer [REDACTED:bearer-token]"},
		{"authorization header in curl", `curl -H "authorization: bearer ` + jwt + `" x`, `curl -H "authorization: bearer [REDACTED:bearer-token]" x`},
		{"basic authorization", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:authorization]"},
		{"bare bearer token", "use bearer abc123def456ghi789jkl now", "use bearer [REDACTED:bearer-token] now"},
		{"jwt", "token " + jwt + " end", "token [REDACTED:jwt] end"},
		{"jwt in json", `{"id_token":"` + jwt + `"}`, `{"id_token":"[REDACTED:jwt]"}`},
		{"rsa private key", "key:\n-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----\nafter", "key:\n[REDACTED:private-key]\nafter"},
		{"openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody + "-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private-key]"},
		{"pkcs8 private key", "a -----BEGIN PRIVATE KEY-----" + pemBody + "-----END PRIVATE KEY----- b", "a [REDACTED:private-key] b"},
		{"encrypted private key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + pemBody + "-----END ENCRYPTED PRIVATE KEY-----\n", "[REDACTED:private-key]\n"},
		{"unterminated private key", "x\n-----BEGIN EC PRIVATE KEY-----\n" + pemBody, "x\n[REDACTED:private-key]"},
		{"password assignment", "password=hunter2hunter2", "password=[REDACTED:password]"},
		{"password flag", "mysql --password=s3cr3tP4ss -u root", "mysql --password=[REDACTED:password] -u root"},
		{"env password", "DB_PASSWORD=correcthorse\nDB_USER=app", "DB_PASSWORD=[REDACTED:password]\nDB_USER=app"},
		{"quoted password", `password = "Tr0ub4dor&3"`, `password = "[REDACTED:password]"`},
		{"json password", `{"password": "hunter2hunter2"}`, `{"password": "[REDACTED:password]"}`},
		{"escaped json password", `{\"password\":\"hunter2hunter2\"}`, `{\"password\":\"[REDACTED:password]\"}`},
		{"yaml secret", "client_secret: 9f8e7d6c5b4a", "client_secret: [REDACTED:secret]"},
		{"go secret", `secret := "abcd1234efgh"`, `secret := "[REDACTED:secret]"`},
		{"url token", "https://x.io/cb?token=abc123def456&next=/", "https://x.io/cb?token=[REDACTED:token]&next=/"},
		{"github token env", "GITHUB_TOKEN=" + githubToken, "GITHUB_TOKEN=[REDACTED:github-token]"},
		{"openai key env", "OPENAI_API_KEY=" + openaiKey, "OPENAI_API_KEY=[REDACTED:openai-key]"},
		{"quoted aws key", `aws_access_key_id = "` + awsKeyID + `"`, `aws_access_key_id = "[REDACTED:aws-access-key]"`},
		{"api key", "api_key = 'k-1234567890abcdef'", "api_key = '[REDACTED:api-key]'"},
		{"api key header", "x-api-key: 0123456789abcdef", "x-api-key: [REDACTED:api-key]"},
		{"camel case api key", `const apiKey = "AbC123xYz789"`, `const apiKey = "[REDACTED:api-key]"`},
		{"two secrets", "password=hunter2hunter2 " + awsKeyID, "password=[REDACTED:password] [REDACTED:aws-access-key]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := privacy.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if want := strings.Count(tt.want, "[REDACTED:"); n != want {
				t.Errorf("n = %d, want %d", n, want)
			}
			if again, n := privacy.Redact(got); again != got || n != 0 {
				t.Errorf("Redact is not idempotent: %q", again)
			}
		})
	}
}

// TestRedactNoFalsePositives feeds ordinary code and prose that must come
// back untouched.
func TestRedactNoFalsePositives(t *testing.T) {
	for _, in := range []string{
		"skip-list", "task-runner", "risk-assessment-framework-v2-final", "sk-learn", "desk-lamp",
		"pip install scikit-learn sk-video-processing-toolkit-extras",
		"commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3", "git checkout 3f2a9c1",
		"id 550e8400-e29b-41d4-a716-446655440000",
		"ghp_short", "AKIA" + "SHORT", awsKeyID + "XY", "eyJhbGciOiJIUzI1NiJ9", "eyJ", "xoxo-gossip-girl",
		"AIza short", "password: string", "token = getToken()", "if token == secret {",
		"const apiKey = process.env.API_KEY", `secret := os.Getenv("SECRET")`, "max_tokens=4096",
		"tokens = tokenize(text)", "Bearer authentication is an HTTP scheme", "the bearer of bad news",
		"password = userPassword", "token: TokenType", "api_key: ${API_KEY}", `token: "<your-token>"`,
		`password="********"`, "Password: <hidden>", `let secret = "";`, "a := b", "x == y", "x != y",
		"https://example.com:8080/path?q=1", "func (t *Token) String() string", "token::Token::new()",
		"secretary", "passwordless login", "token_count: 12", "secret_santa = true",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
		"--------------------", "---\ntitle: x\n---",
		"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		`password: "correct horse battery staple"`, "[REDACTED:password]", "password=[REDACTED:password]",
		`Authorization: Bearer $TOKEN`, "if (token) { return token; }", "token => token.value",
		"password += suffix", "self.token = token", "export PATH=$PATH:/usr/local/bin",
	} {
		t.Run(in, func(t *testing.T) {
			if got, n := privacy.Redact(in); got != in || n != 0 {
				t.Errorf("Redact(%q) = %q, %d; want it unchanged", in, got, n)
			}
		})
	}
}

func TestRedactNoCopy(t *testing.T) {
	if allocs := testing.AllocsPerRun(10, func() { privacy.Redact(prose) }); allocs != 0 {
		t.Errorf("Redact of a text without secrets allocates %v times", allocs)
	}
}

// TestRedactLinear feeds inputs built to make a rescanning redactor
// quadratic.
func TestRedactLinear(t *testing.T) {
	const mb = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mb/len(s)) }
	for _, in := range []string{
		rep("sk-"), rep("sk-a"), rep("github_pat_"), rep("xoxb-"), rep("eyJ."), rep("eyJaaaaaaaaaa."),
		rep("-----BEGIN RSA PRIVATE KEY-----"), rep("-----END RSA PRIVATE KEY-----"), rep("-"),
		rep("bearer "), "bearer " + rep(" "), rep("token="), rep("token=$"), rep("password='"),
		rep("password: "), rep(`\"password\":\"`), rep("Authorization: Basic "), rep("="), rep(":"),
		rep("AKIA"), rep("AIza"), "token=" + rep("a=token="), rep("ghp_"),
	} {
		t.Run(in[:min(len(in), 24)], func(t *testing.T) {
			start := cputime.Process()
			privacy.Redact(in)
			if used := cputime.Process() - start; used > slowdown*200*time.Millisecond {
				t.Errorf("took %v of CPU for %d bytes", used, len(in))
			}
		})
	}
}

func TestClean(t *testing.T) {
	in := "run <private>my notes</private> with password=hunter2hunter2\n<system-reminder>CLAUDE.md</system-reminder>\ndone"
	want := "run with password=[REDACTED:password]\ndone"
	if got := privacy.Clean(in); got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
}
