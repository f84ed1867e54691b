package rest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// fakePluginEnv, when set in the environment, makes the test binary act as
// an exec credential plugin (see TestMain). Its value is the behaviour:
//
//	token    print a token "<FAKE_TOKEN_PREFIX><n>" where n counts the runs
//	         recorded in FAKE_RUNS, with FAKE_EXPIRY as expirationTimestamp;
//	         with FAKE_TOKEN set, print that instead, except in the first
//	         FAKE_WRONG_RUNS runs (a token the server will refuse)
//	cert     print FAKE_CERT / FAKE_KEY as a client certificate (or the
//	         content of the files FAKE_CERT_FILE / FAKE_KEY_FILE), with
//	         FAKE_EXPIRY as expirationTimestamp
//	fail     print a credential, then complain on stderr (quoting it) and exit 3
//	garbage  print a non-JSON line holding a secret
//	hang     sleep for an hour
//
// Every mode first appends KUBERNETES_EXEC_INFO and the number of bytes on
// stdin to FAKE_INFO (when set) as one JSON line.
const fakePluginEnv = "WIRE_TEST_FAKE_EXEC_PLUGIN"

const fakeSecret = "leaked-secret-123"

func fakePlugin(mode string) int {
	runs := recordRun()
	stdin, _ := io.ReadAll(os.Stdin)
	if path := os.Getenv("FAKE_INFO"); path != "" {
		line, _ := json.Marshal(map[string]any{"info": json.RawMessage(os.Getenv("KUBERNETES_EXEC_INFO")), "stdinBytes": len(stdin)})
		appendLine(path, string(line))
	}
	apiVersion := os.Getenv("FAKE_API_VERSION")
	if apiVersion == "" {
		var in execCredential
		_ = json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &in)
		apiVersion = in.APIVersion
	}
	status := map[string]any{}
	switch mode {
	case "token":
		status["token"] = fmt.Sprintf("%s%d", os.Getenv("FAKE_TOKEN_PREFIX"), runs)
		if tok := os.Getenv("FAKE_TOKEN"); tok != "" {
			status["token"] = tok
			if wrong, _ := strconv.Atoi(os.Getenv("FAKE_WRONG_RUNS")); runs <= wrong {
				status["token"] = fmt.Sprintf("wrong-%d", runs)
			}
		}
		if exp := os.Getenv("FAKE_EXPIRY"); exp != "" {
			status["expirationTimestamp"] = exp
		}
	case "cert":
		status["clientCertificateData"], status["clientKeyData"] = os.Getenv("FAKE_CERT"), os.Getenv("FAKE_KEY")
		if f := os.Getenv("FAKE_CERT_FILE"); f != "" {
			cert, _ := os.ReadFile(f)
			key, _ := os.ReadFile(os.Getenv("FAKE_KEY_FILE"))
			status["clientCertificateData"], status["clientKeyData"] = string(cert), string(key)
		}
		if exp := os.Getenv("FAKE_EXPIRY"); exp != "" {
			status["expirationTimestamp"] = exp
		}
	case "fail":
		status["token"] = fakeSecret
		printCredential(apiVersion, status)
		fmt.Fprintf(os.Stderr, "denied: %s is revoked \x1b[31mred\x1b[0m\n%s", fakeSecret, strings.Repeat("x", 10<<10))
		return 3
	case "garbage":
		fmt.Println("token=" + fakeSecret)
		return 0
	case "hang":
		time.Sleep(time.Hour)
	}
	printCredential(apiVersion, status)
	return 0
}

func printCredential(apiVersion string, status map[string]any) {
	out, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": "ExecCredential", "status": status})
	fmt.Println(string(out))
}

// recordRun appends a line to FAKE_RUNS and returns how many there are.
func recordRun() int {
	path := os.Getenv("FAKE_RUNS")
	if path == "" {
		return 1
	}
	appendLine(path, "run")
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}
