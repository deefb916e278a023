// Command setup finishes a Temporal cluster and an S3 bucket for rlsweep, as scripts/topology.sh runs
// them: it waits for the frontend, registers the namespace (24 h retention, as docker-compose.yml's
// temporal-search-attributes service does), registers rlsweep's search attributes the way `rlsweep dev` does
// (devserver.EnsureSearchAttributes with workflows.RequiredSearchAttributes and
// OptionalSearchAttributes), and creates the artifact bucket of RLSWEEP_STORE. Every step leaves what
// is already there untouched, so it is safe to run again.
//
//	go run ./infra/topology/setup --address 127.0.0.1:7233 --namespace default --store s3://rlsweep/artifacts
//
// The S3 endpoint and credentials come from the same environment as the workers' (AWS_ENDPOINT_URL_S3,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/workflows"
)

func main() {
	address := flag.String("address", "127.0.0.1:7233", "the Temporal frontend, host:port")
	namespace := flag.String("namespace", "default", "the Temporal namespace to register")
	retention := flag.Duration("retention", 24*time.Hour, "the namespace's workflow retention")
	store := flag.String("store", "", "the artifact store, s3://bucket/prefix; empty creates no bucket")
	wait := flag.Duration("wait", 2*time.Minute, "how long to wait for the frontend and the S3 endpoint")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "setup: arguments %q: want none\n", flag.Args())
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait)
	defer cancel()
	if err := temporal(ctx, *address, *namespace, *retention); err != nil {
		fmt.Fprintf(os.Stderr, "setup: temporal %s: %v\n", *address, err)
		os.Exit(1)
	}
	if *store != "" {
		if err := bucket(ctx, *store); err != nil {
			fmt.Fprintf(os.Stderr, "setup: store %s: %v\n", *store, err)
			os.Exit(1)
		}
	}
}

// retry runs f every second until it succeeds or ctx ends; it returns f's last error.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

func temporal(ctx context.Context, address, namespace string, retention time.Duration) error {
	var c client.Client
	if err := retry(ctx, func() (err error) {
		c, err = client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace})
		return err
	}); err != nil {
		return err
	}
	defer c.Close()
	err := retry(ctx, func() error {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		var nf *serviceerror.NamespaceNotFound
		if !errors.As(err, &nf) {
			return err
		}
		_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(retention)})
		var exists *serviceerror.NamespaceAlreadyExists
		if err == nil || errors.As(err, &exists) {
			fmt.Fprintf(os.Stderr, "setup: registered namespace %s\n", namespace)
			return errors.New("namespace registered, waiting for the frontend to see it")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("namespace %s: %w", namespace, err)
	}
	// A namespace registered a moment ago reaches each service's cache within about 10 s.
	var added []string
	if err := retry(ctx, func() (err error) {
		added, err = devserver.EnsureSearchAttributes(ctx, c, namespace, workflows.RequiredSearchAttributes())
		return err
	}); err != nil {
		return fmt.Errorf("search attributes: %w", err)
	}
	opt, err := devserver.EnsureSearchAttributes(ctx, c, namespace, workflows.OptionalSearchAttributes())
	if err != nil {
		fmt.Fprintf(os.Stderr, "setup: optional search attributes not registered (trials go without them): %v\n", err)
	}
	if added = append(added, opt...); len(added) > 0 {
		fmt.Fprintf(os.Stderr, "setup: registered search attributes %s\n", strings.Join(added, ", "))
	}
	return nil
}

func bucket(ctx context.Context, store string) error {
	name, _, err := artifacts.ParseS3URL(store)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	return retry(ctx, func() error {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
		var owned *types.BucketAlreadyOwnedByYou
		if err == nil {
			fmt.Fprintf(os.Stderr, "setup: created bucket %s\n", name)
		}
		if err == nil || errors.As(err, &owned) {
			return nil
		}
		return err
	})
}
